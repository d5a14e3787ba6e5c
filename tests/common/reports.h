/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * tests/common/reports.h - capture ksync's misuse reports in a test: install
 * kt_record_report as ksync_warn_hook, then read how many reports came and
 * the file and line the last one named.
 */
#ifndef KT_REPORTS_H
#define KT_REPORTS_H

static int reports;
static const char *report_file;
static int report_line;

static void kt_record_report(const char *file, int line, const char *what)
{
	(void)what;
	reports++;
	report_file = file;
	report_line = line;
}

#endif /* KT_REPORTS_H */

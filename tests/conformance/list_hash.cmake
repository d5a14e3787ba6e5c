# list.h, hlist, hash.h, hashtable.h conformance
ksync_conformance_test(list_kernel_test list_kernel_test.c)
ksync_conformance_test(hlist_kernel_test hlist_kernel_test.c)
ksync_conformance_test(hashtable_kernel_test hashtable_kernel_test.c)

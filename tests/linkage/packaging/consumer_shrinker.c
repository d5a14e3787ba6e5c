/* A downstream program of ksync::shrinker / ksync-shrinker.pc: links the
 * compiled registry (a call into it, not only its header). */
#include <ksync/shrinker.h>

int main(void)
{
	struct ksync_shrinker_registry *reg = ksync_shrinker_registry_create(2);

	if (!reg || ksync_shrinker_registry_nr_nodes(reg) != 2)
		return 1;
	return ksync_shrinker_registry_destroy(reg) == 0 ? 0 : 1;
}

/* A downstream program: found ksync through find_package, add_subdirectory or pkg-config. */
#include <ksync/kernel.h>

int main(void)
{
	atomic_long_t v = ATOMIC_LONG_INIT(41);
	return atomic_long_inc_return(&v) == 42 ? 0 : 1;
}

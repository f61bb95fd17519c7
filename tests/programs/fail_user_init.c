/* A site's SPANK plugin that fails a step in slurmstepd after stepmap's
 * slurm_spank_init and before the tasks are forked (its user_init), when
 * the job's environment has SLURM_TEST_FAIL_USER_INIT: how test_faults
 * makes a step fail before its tasks start. Loaded after stepmap in
 * plugstack.conf. */

#include <slurm/spank.h>

SPANK_PLUGIN(fail_user_init, 1)

int slurm_spank_user_init(spank_t sp, int ac, char **av) {
    (void)ac;
    (void)av;
    char value[8];
    if (spank_getenv(sp, "SLURM_TEST_FAIL_USER_INIT", value, sizeof value) != ESPANK_SUCCESS)
        return 0;
    slurm_error("fail_user_init: failing the step before its tasks, as the test asked");
    return -1;
}

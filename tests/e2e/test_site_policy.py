"""The site policy file (stepmap.yaml(5), plugstack.conf's config=FILE) on
the real cluster: which steps stepmap serves (a plain PMIx srun, when the
site says serve: pmix), the site's default placement and its precedence
(command line > environment > site file > built-in), what the site
forbids, and a broken file stopping the plugin with file, line and key."""

import contextlib
import os
import re
import unittest

import cluster
from cluster import hello_ranks

HELLO = cluster.program("STEPMAP_MPI_HELLO")


@contextlib.contextmanager
def site_file(text, more=""):
    """A site file holding `text`, named by plugstack.conf (with `more`
    arguments) for a while. Owned by root and not writable by others, as
    the plugin requires; readable by the users, whose srun reads it."""
    etc = os.path.join(cluster.cluster_env()["STEPMAP_CLUSTER_DIR"], "etc")
    path = os.path.join(etc, "stepmap.yaml")
    with open(path, "w") as f:
        f.write(text)
    os.chmod(path, 0o644)
    try:
        with cluster.plugstack(cluster.with_plugin_arguments(f"config={path} {more}")):
            yield path
    finally:
        os.unlink(path)


@contextlib.contextmanager
def mpi_default_pmix():
    """A copy of the cluster's slurm.conf with MpiDefault=pmix, for srun
    only (srun reads slurm.conf itself; it tells the nodes its MPI type)."""
    env = cluster.cluster_env()
    path = os.path.join(env["STEPMAP_CLUSTER_DIR"], "etc", "slurm-mpi-pmix.conf")
    with open(env["SLURM_CONF"]) as f:
        text = re.sub(r"(?m)^MpiDefault=.*$", "MpiDefault=pmix", f.read())
    with open(path, "w") as f:
        f.write(text)
    os.chmod(path, 0o644)
    try:
        yield {"SLURM_CONF": path}
    finally:
        os.unlink(path)


def served_by(result):
    """'stepmap' or 'slurm': whose PMIx server the ranks had, by namespace."""
    spaces = {nspace for (_node, _size, nspace, _sum, _shared) in hello_ranks(result.stdout).values()}
    if spaces and all(s.startswith("stepmap.") for s in spaces):
        return "stepmap"
    if spaces and all(s.startswith("slurm.pmix.") for s in spaces):
        return "slurm"
    return f"? {spaces} {result.stderr}"


def layout_of(output):
    return cluster.layout(node for _r, (node, *_rest) in sorted(hello_ranks(output).items()))


# Slurm chooses the nodes (one may still be completing a previous step): the
# tests compare layouts, not names.
BY_NODE = "ABAB"
BY_SLOT = "AABB"


class ServedStepsTest(cluster.StepTestCase):
    def test_a_plain_pmix_step_is_served_where_the_site_says_so(self):
        """serve: pmix: --mpi=pmix, SLURM_MPI_TYPE=pmix and MpiDefault=pmix
        each get stepmap's server, placed by the site's default."""
        with site_file("serve: pmix\ndefaults:\n  map_by: node\n"):
            r = cluster.srun("-N2", "-n4", "--mpi=pmix", HELLO)
            self.assertRanksLaidOut(r, BY_NODE)
            r = cluster.srun("-N2", "-n4", HELLO, extra_env={"SLURM_MPI_TYPE": "pmix"})
            self.assertRanksLaidOut(r, BY_NODE)
            with mpi_default_pmix() as conf:
                r = cluster.srun("-N2", "-n4", HELLO, extra_env=conf)
                self.assertRanksLaidOut(r, BY_NODE)
                # --mpi=none still means none: not a PMIx step.
                r = cluster.srun("-N2", "-n2", "--mpi=none", "/bin/true", extra_env=conf)
                self.assertEqual(r.returncode, 0, r.stderr)
                self.assertNotIn("stepmap", r.stderr)

    def test_without_serve_pmix_a_pmix_step_stays_slurms(self):
        with site_file("defaults:\n  map_by: node\n"):
            r = cluster.srun("-N2", "-n4", "--mpi=pmix", HELLO)
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertEqual(served_by(r), "slurm")
            self.assertEqual(layout_of(r.stdout), BY_SLOT, "Slurm's block layout, not the site's default")
        with site_file("serve: options\n"):
            r = cluster.srun("-N2", "-n4", "--mpi=pmix", HELLO)
            self.assertEqual(served_by(r), "slurm")

    def test_a_step_with_srun_layout_options_is_left_to_slurm(self):
        with site_file("serve: pmix\n"):
            r = cluster.srun("-v", "-N2", "-n4", "-m", "cyclic", "--mpi=pmix", HELLO)
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertEqual(served_by(r), "slurm")
            self.assertEqual(layout_of(r.stdout), BY_NODE, "srun's cyclic layout")
            self.assertIn("-m lays the tasks out itself; Slurm's --mpi=pmix serves it", r.stderr)
            r = cluster.srun("-v", "-N2", "-n4", "--ntasks-per-node=2", "--mpi=pmix", HELLO)
            self.assertEqual(served_by(r), "slurm")
            self.assertIn("--ntasks-per-node lays the tasks out itself", r.stderr)
            r = cluster.srun("-v", "-N2", "-n2", "--exact", "--mpi=pmix", HELLO)
            self.assertEqual(served_by(r), "slurm")
            self.assertIn("--exact shares the job's CPUs between steps", r.stderr)

    def test_a_served_plain_step_counts_its_tasks_as_srun_does(self):
        """-n, else the job's SLURM_NTASKS, else one per node: not one per
        CPU as mpirun would."""
        with site_file("serve: pmix\n"):
            r = cluster.srun("-N2", "--mpi=pmix", HELLO)
            self.assertRanksLaidOut(r, "AB")
            r, out = cluster.run_sbatch(f"#!/bin/sh\n#SBATCH -N2 -n3\nsrun --mpi=pmix {HELLO}\n")
            self.assertEqual(r.returncode, 0, r.stderr + out)
            ranks = hello_ranks(out)
            self.assertEqual(sorted(ranks), [0, 1, 2], out)
            self.assertTrue(all(nspace.startswith("stepmap.")
                                for (_n, _s, nspace, _t, _h) in ranks.values()), out)


class PrecedenceTest(cluster.StepTestCase):
    SITE = "defaults:\n  map_by: node\n"

    def test_built_in_then_site_then_environment_then_command_line(self):
        r = cluster.srun("-N2", "-n4", "--display-map", HELLO)
        self.assertRanksLaidOut(r, BY_SLOT)  # built-in: by slot, as mpirun
        with site_file(self.SITE):
            r = cluster.srun("-N2", "-n4", "--display-map", HELLO)
            self.assertRanksLaidOut(r, BY_NODE)  # the site's default
            r = cluster.srun("-N2", "-n4", "--map-by", "slot", HELLO)
            self.assertRanksLaidOut(r, BY_SLOT)  # the command line wins
            # An option sbatch forwards (the environment) wins over the site.
            r, out = cluster.run_sbatch(
                "#!/bin/sh\n#SBATCH -N2 -n4 --map-by slot\n"
                f"srun {HELLO}\n")
            self.assertEqual(r.returncode, 0, r.stderr + out)
            self.assertEqual(layout_of(out), BY_SLOT, out)
            # ... and the command line inside the job over what sbatch forwarded.
            r, out = cluster.run_sbatch(
                "#!/bin/sh\n#SBATCH -N2 -n4 --map-by slot\n"
                f"srun --map-by node {HELLO}\n")
            self.assertEqual(layout_of(out), BY_NODE, out)

    def test_parastation_environment_keeps_the_site_placement_out(self):
        """PSI_* variables choose ParaStation placement, which refuses
        mpirun's --map-by node: the site's map_by must not apply then."""
        with site_file(self.SITE):
            r = cluster.srun("-N2", "-n4", HELLO, extra_env={"PSI_OVERBOOK": "1"})
            self.assertRanksLaidOut(r, BY_SLOT)

    def test_an_error_caused_by_a_site_default_says_so(self):
        with site_file("serve: pmix\ndefaults:\n  map_by: ppr:1:node\n"):
            r = cluster.srun("-N2", "-n4", "--mpi=pmix", HELLO)
            self.assertRefused(r, "--map-by ppr:1:node: this cluster's default, from")


class ForbiddenTest(cluster.StepTestCase):
    def test_oversubscribing_refused_where_the_site_forbids_it(self):
        with site_file("allow:\n  oversubscribe: false\n"):
            r = cluster.srun("-N1", "-n2", "--map-by", "slot", HELLO)
            self.assertRanksLaidOut(r, "AA")
            cpus = os.cpu_count()  # every node declares all of the machine's
            r = cluster.srun("-N1", "-w", "n1", "-n", str(cpus * 2),
                             "--map-by", "slot:OVERSUBSCRIBE", HELLO)
            self.assertRefused(r, "does not allow oversubscribing (allow.oversubscribe: false in")
            # The job stepmap asked for is released (slurmctld drops it a
            # moment later; a job kept would stay for its time limit).
            self.assertTrue(cluster.wait_for(lambda: cluster.slurm_jobs() == [], 10),
                            cluster.slurm_jobs())

    def test_overbook_refused_where_the_site_forbids_it(self):
        with site_file("allow:\n  overbook: false\n"):
            r = cluster.srun("-N1", "-n2", "--overbook", HELLO)
            self.assertRefused(r, "--overbook: this cluster does not allow overbooking")
            r = cluster.srun("-N1", "-n2", HELLO, extra_env={"PSI_OVERBOOK": "1"})
            self.assertRefused(r, "PSI_OVERBOOK: this cluster does not allow overbooking")

    def test_limits(self):
        with site_file("limits:\n  ranks: 4\n  ranks_per_node: 1\n"):
            self.assertRanksOn(cluster.srun("-N4", "-n4", "--map-by", "node", HELLO),
                               ["n1", "n2", "n3", "n4"])
            r = cluster.srun("-N3", "-n5", "--map-by", "node", HELLO)
            self.assertRefused(r, "the plan has 5 ranks; this cluster allows at most 4 in a step "
                                  "(limits.ranks: 4 in")
            r = cluster.srun("-N2", "-n3", "--map-by", "slot", HELLO)
            self.assertRefused(r, "(limits.ranks_per_node: 1 in")
            self.assertRegex(r.stderr, r"the plan puts 2 ranks on n\d")


class SiteFileTest(cluster.StepTestCase):
    def test_a_broken_file_stops_the_plugin_naming_file_line_and_key(self):
        with site_file("defaults:\n  map_by: node\n  colour: blue\n") as path:
            r = cluster.srun("-N2", "-n2", "--map-by", "node", HELLO)
            self.assertRefused(r, f"{path}:3: defaults.colour")
            # The job stepmap asked for is released (slurmctld drops it a
            # moment later; a job kept would stay for its time limit).
            self.assertTrue(cluster.wait_for(lambda: cluster.slurm_jobs() == [], 10),
                            cluster.slurm_jobs())
            # A step stepmap does not serve never reads it: it costs nothing.
            r = cluster.srun("-N1", "/bin/true")
            self.assertEqual(r.returncode, 0, r.stderr)
        with site_file("serve: pmix\ndefaults:\n  bind_to: elbow\n") as path:
            # serve: pmix makes every PMIx step read it: refused, named.
            r = cluster.srun("-N1", "-n1", "--mpi=pmix", HELLO)
            self.assertRefused(r, f"{path}:3: defaults.bind_to")

    def test_a_setting_in_plugstack_and_in_the_file_is_refused(self):
        # The cluster's plugstack.conf sets log_dir= already.
        with site_file("log:\n  dir: /var/tmp\n"):
            r = cluster.srun("-N1", "-n1", "--map-by", "slot", HELLO)
            self.assertRefused(r, "plugstack.conf argument log_dir= and log.dir in",
                               "keep one of them")

    def test_a_file_others_can_write_is_refused(self):
        with site_file("serve: options\n") as path:
            os.chmod(path, 0o666)
            r = cluster.srun("-N1", "-n1", "--map-by", "slot", HELLO)
            self.assertRefused(r, path, "chmod go-w")

    def test_debug_log_level_logs_each_collective(self):
        with site_file("log:\n  level: debug\n"):
            r = cluster.srun("-N2", "-n2", "--map-by", "node", HELLO)
            self.assertRanksLaidOut(r, "AB")
        ran = hello_ranks(r.stdout)
        logs = cluster.server_logs(ran[0][2])
        self.assertEqual(sorted(logs), sorted(node for (node, *_rest) in ran.values()))
        for node, text in logs.items():
            self.assertRegex(text, r"(fence with data|barrier) over 2 nodes", node)
        # At the default level, none of those lines.
        r = cluster.srun("-N2", "-n2", "--map-by", "node", HELLO)
        for node, text in cluster.server_logs(hello_ranks(r.stdout)[0][2]).items():
            self.assertNotRegex(text, r"(fence with data|barrier) over", node)

    def test_site_default_modex(self):
        with site_file("defaults:\n  modex: async\n"):
            r = cluster.srun("-v", "-N2", "-n4", "--map-by", "node", HELLO)
            self.assertRanksLaidOut(r, BY_NODE)
            self.assertRegex(r.stderr, r"exchange .*: 0 data fences")
            r = cluster.srun("-v", "-N2", "-n4", "--map-by", "node", "--modex=fence", HELLO)
            self.assertRegex(r.stderr, r"exchange .*: 1 data fences?")


if __name__ == "__main__":
    cluster.require_root()
    unittest.main(verbosity=2)

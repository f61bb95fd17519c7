"""srun --display-map=svg:FILE: the job drawn as a picture, written by srun
as the user before the step starts, and checked by drawing it with a real
SVG renderer (rsvg-convert) and reading the pixels back; a bad value, or a
file srun cannot create, stops srun (and sbatch) before anything is
allocated. The bare flag and =text keep the text map, also when sbatch
forwards them to the sruns of a job script."""

import os
import pwd
import re
import shutil
import stat
import subprocess
import sys
import tempfile
import unittest

import cluster
from cluster import MPI_HELLO, TEST_USER, run_as_user, srun, write_user_file

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import svg_pictures  # noqa: E402
from svg_pictures import APP_COLOURS, SVG_NS, groups, near  # noqa: E402


def next_job_id():
    """The id Slurm gives the next job: unchanged means no job was created,
    not even one granted and released at once."""
    out = subprocess.run(["scontrol", "show", "config"], stdout=subprocess.PIPE, text=True,
                         env={**os.environ, **cluster.cluster_env()}).stdout
    return int(re.search(r"^NEXT_JOB_ID\s*=\s*(\d+)", out, re.M).group(1))


def ranks_by_node(root):
    """{rank: node} as the picture draws them (rank marks inside node boxes)."""
    drawn = {}
    for node in groups(root, "node"):
        for mark in groups(node, "rank"):
            drawn[int(mark.get("data-rank"))] = node.get("data-node")
    return drawn


def app_of(root):
    """{rank: application index} from the rank marks' appN class."""
    apps = {}
    for mark in groups(root, "rank"):
        app = [c for c in mark.get("class").split() if re.fullmatch(r"app\d+", c)]
        apps[int(mark.get("data-rank"))] = int(app[0][3:])
    return apps


class DisplayMapSvgTest(cluster.StepTestCase):
    def setUp(self):
        if svg_pictures.RSVG is None:
            self.fail(svg_pictures.MISSING_RENDERER)
        # A directory of the test user's, where srun writes as that user.
        self.dir = tempfile.mkdtemp(prefix="stepmap-map-", dir=cluster.shared_dir("files"))
        os.chown(self.dir, pwd.getpwnam(TEST_USER).pw_uid, -1)
        self.uid = pwd.getpwnam(TEST_USER).pw_uid

    def tearDown(self):
        shutil.rmtree(self.dir, ignore_errors=True)
        self.assertTrue(cluster.wait_for(lambda: not cluster.slurm_jobs(), 20),
                        f"jobs left: {cluster.slurm_jobs()}")
        super().tearDown()

    def assertDrawnAsTheUser(self, path, result, ranks, nodes):
        """srun said where it drew the map; the file is the user's, with the
        mode 0644 less the umask, alone in its directory (no temporary file)."""
        self.assertIn(f"stepmap: job map drawn in {path} ({ranks} ranks on {nodes} nodes)",
                      result.stderr)
        self.assertNotIn("<svg", result.stdout, "the picture went to the job's output")
        st = os.lstat(path)
        self.assertTrue(stat.S_ISREG(st.st_mode))
        self.assertEqual(st.st_uid, self.uid, "written as the user")
        umask = os.umask(0)
        os.umask(umask)
        self.assertEqual(stat.S_IMODE(st.st_mode), 0o644 & ~umask)
        self.assertEqual(os.listdir(os.path.dirname(path)), [os.path.basename(path)],
                         "a temporary file was left")

    def render(self, path):
        picture = svg_pictures.render(path, path[:-4] + ".png")
        self.assertIsNone(picture.problem, picture.problem)
        self.assertGreater(os.path.getsize(picture.png), 0)
        self.assertGreaterEqual(len(picture.colours), 8, "a blank picture")
        return picture

    def test_a_multi_node_multi_app_bound_job_is_drawn(self):
        conf = write_user_file(f"# two applications\n0-3 {MPI_HELLO}\n4-7 {MPI_HELLO}\n")
        path = os.path.join(self.dir, "map.svg")
        try:
            r = srun("-N4", "-n", "8", "--map-by", "core", "--bind-to", "core",
                     f"--display-map=svg:{path}", "--multi-prog", conf)
        finally:
            os.unlink(conf)
        self.assertEqual(r.returncode, 0, r.stderr)
        ran = cluster.hello_ranks(r.stdout)
        self.assertEqual(sorted(ran), list(range(8)), r.stdout + r.stderr)
        self.assertDrawnAsTheUser(path, r, 8, 4)
        picture = self.render(path)
        # Each rank drawn on the node it ran on, in its application's colour,
        # bound (a bar on its core, not an unbound chip).
        self.assertEqual(ranks_by_node(picture.root),
                         {rank: facts[0] for rank, facts in ran.items()})
        self.assertEqual(app_of(picture.root), cluster.hello_apps(r.stdout))
        self.assertEqual(set(app_of(picture.root).values()), {0, 1})
        self.assertEqual(groups(picture.root, "unbound"), [])
        self.assertEqual(sorted(g.get("data-node") for g in groups(picture.root, "node")),
                         sorted({facts[0] for facts in ran.values()}))
        cores = [e for e in picture.root.iter(SVG_NS + "rect") if e.get("class") == "core"]
        self.assertGreaterEqual(len(cores), 4, "the nodes' cores are drawn")
        for app in (0, 1):
            self.assertGreater(near(picture.colours, APP_COLOURS[app]), 200,
                               f"application {app}'s colour is not in the PNG")

    def test_the_hardware_is_drawn_when_the_plan_does_not_need_it(self):
        path = os.path.join(self.dir, "node.svg")
        r = srun("-n", "4", "--map-by", "node", f"--display-map=svg:{path}", MPI_HELLO)
        self.assertRanksOn(r, ["n1", "n2", "n3", "n4"])
        self.assertDrawnAsTheUser(path, r, 4, 4)
        picture = self.render(path)
        self.assertEqual(ranks_by_node(picture.root), {0: "n1", 1: "n2", 2: "n3", 3: "n4"})
        cores = [e for e in picture.root.iter(SVG_NS + "rect") if e.get("class") == "core"]
        self.assertGreaterEqual(len(cores), 4, "Slurm's node shapes are drawn")

    def test_an_existing_file_is_replaced_whole(self):
        path = os.path.join(self.dir, "map.svg")
        r = run_as_user(["sh", "-c", f"echo old > {path}"])
        self.assertEqual(r.returncode, 0, r.stderr)
        r = srun("-n", "2", "--map-by", "node", f"--display-map=svg:{path}", MPI_HELLO)
        self.assertRanksLaidOut(r, "AB")
        self.assertDrawnAsTheUser(path, r, 2, 2)
        with open(path) as f:
            self.assertTrue(f.read().startswith("<?xml"))

    def test_bad_values_are_refused_before_anything_starts(self):
        locked = os.path.join(self.dir, "locked")
        os.mkdir(locked, 0o755)  # root's: the user cannot write there
        accepted = ("(accepted: no value or text for the job map on stderr, svg:FILE for the "
                    "job drawn as SVG in FILE)")
        cases = [
            ("png:x", ["--display-map 'png:x': unknown form " + accepted]),
            ("svg:", ["--display-map 'svg:': names no file",
                      "write --display-map=svg:FILE"]),
            ("svg:-", ["--display-map 'svg:-': srun's standard output carries the job's output",
                       "name a file"]),
            (f"svg:{self.dir}/missing/map.svg",
             [f"--display-map 'svg:{self.dir}/missing/map.svg': cannot create a file in "
              f"'{self.dir}/missing': No such file or directory; name a file in an existing "
              "directory"]),
            (f"svg:{locked}/map.svg",
             [f"--display-map 'svg:{locked}/map.svg': cannot create a file in '{locked}': "
              "Permission denied; name a file in a directory you can write to"]),
            (f"svg:{self.dir}",
             [f"--display-map 'svg:{self.dir}': '{self.dir}' is a directory"]),
        ]
        for value, needles in cases:
            with self.subTest(value=value):
                before = next_job_id()
                r = srun("-N4", "-n", "8", "--map-by", "core", f"--display-map={value}",
                         MPI_HELLO, timeout=60)
                self.assertRefused(r, *needles)
                self.assertEqual(next_job_id(), before, "a job was created")
        self.assertEqual(sorted(os.listdir(self.dir)), ["locked"], "files were left")
        self.assertEqual(os.listdir(locked), [])

    def test_sbatch_refuses_a_bad_value_at_submission(self):
        for value, needle in [("svg:", "names no file"), ("jpeg:x", "unknown form")]:
            with self.subTest(value=value):
                before = next_job_id()
                r = run_as_user(["sbatch", f"--display-map={value}", "--wrap", "true"])
                self.assertNotEqual(r.returncode, 0, r.stdout)
                self.assertIn(needle, r.stderr)
                self.assertEqual(next_job_id(), before, "a job was submitted")

    def test_job_scripts_forward_either_form(self):
        # sbatch forwards a bare --display-map as the text map, and
        # =svg:FILE as the picture, to every srun of the script.
        r, text = cluster.run_sbatch("#!/bin/bash\n#SBATCH -N 2 -n 4\n#SBATCH --display-map\n"
                                     f"srun -n 4 --map-by node {MPI_HELLO}\n")
        self.assertEqual(r.returncode, 0, r.stderr + text)
        self.assertIn("JOB MAP", text)
        self.assertEqual(len(cluster.hello_ranks(text)), 4, text)
        path = os.path.join(self.dir, "job.svg")
        r, text = cluster.run_sbatch("#!/bin/bash\n#SBATCH -N 2 -n 4\n"
                                     f"#SBATCH --display-map=svg:{path}\n"
                                     f"srun -n 4 --map-by node {MPI_HELLO}\n")
        self.assertEqual(r.returncode, 0, r.stderr + text)
        self.assertNotIn("JOB MAP", text)
        self.assertIn(f"stepmap: job map drawn in {path} (4 ranks on 2 nodes)", text)
        picture = self.render(path)
        self.assertEqual(sorted(ranks_by_node(picture.root)), [0, 1, 2, 3])

    def test_the_text_forms_print_the_map_and_take_no_word(self):
        # A bare --display-map followed by the program: the program runs.
        for form in (["--display-map"], ["--display-map=text"]):
            with self.subTest(form=form):
                r = srun("-n", "2", "--map-by", "node", *form, MPI_HELLO)
                self.assertRanksLaidOut(r, "AB")
                self.assertIn("JOB MAP", r.stderr)
                self.assertNotIn("drawn in", r.stderr)


if __name__ == "__main__":
    cluster.require_root()
    unittest.main(verbosity=2)

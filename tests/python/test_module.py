"""The Python module against numbers: free fall in closed form, the host and device engines bit for
bit, restarts bit for bit, motion changes without a jump, particles in and out, the output files
read back (with the project's parser everywhere, with VTK and meshio where installed)."""
import json
import math
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import dem

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))
import dem_vtu  # noqa: E402  the project's own reader

G = 9.81


# Hertz static overlap of a glass sphere (r = 1 cm, E = 1e7, nu = 0.25) resting on a rigid floor:
# delta = (3 m g / (4 E* sqrt(r)))^(2/3) with E* = E / (1 - nu^2); placed there, it stays at rest.
M = 2500 * 4 / 3 * math.pi * 0.01 ** 3
REST_Y = 0.01 - (3 * M * G / (4 * 1e7 / (1 - 0.25 ** 2) * math.sqrt(0.01))) ** (2 / 3)


def ball_scene(**extra):
    """Two spheres over a floor quad (gravity -y): one resting on it, one falling freely."""
    scene = {
        "name": "balls",
        "simulation": {"dt": 1e-5, "end_time": 0.02, "gravity": [0, -G, 0]},
        "materials": [{"name": "g", "density": 2500, "youngs_modulus": 1e7, "poisson_ratio": 0.25},
                      {"name": "w", "youngs_modulus": "inf", "poisson_ratio": 0.3}],
        "interactions": [{"materials": ["g", "g"], "restitution": 0.5},
                         {"materials": ["g", "w"], "restitution": 0.5}],
        "particles": [{"position": [0, REST_Y, 0], "radius": 0.01, "material": "g"},
                      {"position": [0.5, 0.3, 0], "radius": 0.01, "material": "g"}],
        "meshes": [{"name": "floor", "material": "w",
                    "vertices": [[-1, 0, -1], [1, 0, -1], [1, 0, 1], [-1, 0, 1]], "faces": [[0, 3, 2, 1]]}],
    }
    scene.update(extra)
    return scene


def by_id(sim, values):
    order = np.argsort(sim.ids())
    return np.asarray(values)[order]


def test_free_fall_matches_the_closed_form_of_the_scheme():
    sim = dem.Simulation.from_dict(ball_scene(), device="cpu")
    assert sim.engine == "host-openmp" and sim.num_particles == 2
    n = 1000
    sim.step(n)
    assert sim.step_count == n and sim.time == pytest.approx(n * sim.dt, rel=1e-15)
    free = int(np.nonzero(sim.ids() == 1)[0][0])
    t, dt = sim.time, sim.dt
    # central differences from rest (the initial velocity is the scheme's v(-dt/2)):
    # y_n = y0 - g dt^2 n (n + 1) / 2, and the velocity at t is -g (t + dt/2); round-off only
    assert sim.positions()[free, 1] == pytest.approx(0.3 - G * dt * dt * n * (n + 1) / 2, abs=1e-13)
    assert sim.velocities()[free, 1] == pytest.approx(-G * (t + dt / 2), rel=1e-12)
    assert sim.half_step_velocities()[free, 1] == pytest.approx(-G * t, rel=1e-12)
    # the resting ball: its contact force carries its weight m g (1e-3: the damped Hertz law at the
    # static overlap, with round-off in the overlap of order 1e-16 m against 1.7e-5 m)
    rest = 1 - free
    assert sim.forces()[rest, 1] == pytest.approx(M * G, rel=1e-3)
    assert sim.body_forces()[0, 1] == pytest.approx(-M * G, rel=1e-3)
    assert sim.contact_counts() == (0, 1)


def test_host_arrays_are_read_only_views_and_device_arrays_copies():
    sim = dem.Simulation.from_dict(ball_scene(), device="cpu")
    x = sim.positions()
    assert not x.flags.writeable and not x.flags.owndata
    with pytest.raises(ValueError):
        x[0, 0] = 1.0
    assert sim.ids().dtype == np.int64 and sim.radii().shape == (2,)
    if "omp" in dem.devices_available():
        d = dem.Simulation.from_dict(ball_scene(), device="omp")
        assert d.engine == "device-omp"
        assert d.positions().flags.owndata


@pytest.mark.skipif("omp" not in dem.devices_available(), reason="the device engine on OpenMP is not built")
def test_device_engine_gives_the_host_bits_through_the_module():
    scene = str(ROOT / "scenes/demo/demo.yaml")
    runs = []
    for device in ("cpu", "omp"):
        sim = dem.Simulation(scene, overrides={"fills.0.count": 300}, device=device)
        sim.step(400)
        runs.append((by_id(sim, sim.positions()), by_id(sim, sim.velocities()), sim.body_torques(),
                     np.array([sim.max_overlap(), *sim.contact_counts()])))
    for a, b in zip(runs[0], runs[1]):
        assert np.array_equal(a, b)


def test_restart_from_a_checkpoint_gives_the_same_bits(tmp_path):
    scene = str(ROOT / "scenes/demo/demo.yaml")
    over = {"fills.0.count": 300}
    straight = dem.Simulation(scene, over, device="cpu")
    straight.step(300)
    straight.set_body_motion("blade", angular_velocity=[0, 0, -12])
    straight.step(300)
    first = dem.Simulation(scene, over, device="cpu")
    first.step(300)
    first.set_body_motion("blade", angular_velocity=[0, 0, -12])
    first.forces()  # an output-time read before the checkpoint: forces current
    first.write_checkpoint(tmp_path / "c.bin")
    second = dem.Simulation.restart(scene, tmp_path / "c.bin", over, device="cpu")
    assert second.step_count == 300
    v, w = second.body_motion("blade")
    assert np.array_equal(w, [0, 0, -12])
    second.step(300)
    assert np.array_equal(by_id(straight, straight.positions()), by_id(second, second.positions()))
    assert np.array_equal(by_id(straight, straight.velocities()), by_id(second, second.velocities()))
    assert np.array_equal(straight.body_torques(), second.body_torques())
    # another scene's physics is refused, naming the file
    with pytest.raises(dem.InputError, match="c.bin"):
        dem.Simulation.restart(scene, tmp_path / "c.bin", {"fills.0.count": 300, "simulation.dt": 1e-5})


def test_a_motion_change_starts_from_the_present_pose():
    sim = dem.Simulation(str(ROOT / "scenes/demo/demo.yaml"), {"fills.0.count": 50}, device="cpu")
    sim.step(100)
    c0 = sim.body_center("blade")
    sim.set_body_motion("blade", velocity=[0.01, 0, 0], angular_velocity=[0, 0, 3])
    assert np.allclose(sim.body_center("blade"), c0, atol=1e-15)
    t0 = sim.time
    sim.step(200)
    assert np.allclose(sim.body_center("blade") - c0, [0.01 * (sim.time - t0), 0, 0], atol=1e-12)
    with pytest.raises(KeyError, match="no mesh body named 'blades'"):
        sim.set_body_motion("blades", angular_velocity=[0, 0, 1])


def test_particles_added_and_removed_keep_unique_ids():
    sim = dem.Simulation.from_dict(ball_scene(), device="cpu")
    sim.step(10)
    new = sim.add_particles([[0.2, 0.5, 0], [0.3, 0.5, 0]], [0.01, 0.012], "g", velocities=[[0, -1, 0], [0, 0, 0]])
    assert list(new) == [2, 3] and sim.num_particles == 4
    with pytest.raises(ValueError, match="overlaps particle 2"):
        sim.add_particles([[0.205, 0.5, 0]], [0.01], "g")
    with pytest.raises(KeyError, match="no material named 'steel'"):
        sim.add_particles([[0.7, 0.5, 0]], [0.01], "steel")
    assert sim.remove_particles([2, 99]) == 1
    assert sorted(sim.ids()) == [0, 1, 3] and sim.removed_particles == 1
    assert list(sim.add_particles([[0.8, 0.5, 0]], [0.01], "g")) == [4]  # ids are never reused
    sim.step(10)
    v3 = sim.half_step_velocities()[sim.ids() == 3][0]
    assert v3[1] == pytest.approx(-G * 10 * sim.dt, rel=1e-12)  # added at rest, then 10 steps of fall


def test_bad_input_and_blow_ups_raise_clear_errors():
    with pytest.raises(dem.InputError, match="simulation.td"):
        dem.Simulation.from_dict(ball_scene(), overrides={"simulation.td": 1})
    with pytest.raises(ValueError, match="device"):
        dem.Simulation.from_dict(ball_scene(), device="tpu")
    # 25 % of a radius into each other with a stiff contact: thrown apart, caught as a blow-up
    scene = ball_scene()
    scene["materials"][0]["youngs_modulus"] = 1e12
    scene["particles"][1]["position"] = [0.0175, REST_Y, 0]
    sim = dem.Simulation.from_dict(scene, device="cpu")
    with pytest.raises(dem.SimulationError, match="has blown up"):
        sim.step(10)


def test_run_with_callbacks_and_output_at_one_time(tmp_path):
    scene = ball_scene(output={"snapshot_interval": 0.005, "probe_interval": 0.005, "probe_ids": [1],
                               "compression": "zlib"})
    sim = dem.Simulation.from_dict(scene, device="cpu")
    seen = []

    def callback(s):
        seen.append(round(s.time, 9))
        return s.time < 0.0149  # stops after the callback at 0.015

    sim.run(every=0.005, callback=callback, output=tmp_path)
    assert seen == [0.005, 0.01, 0.015]
    snaps = dem_vtu.read_pvd(tmp_path / "particles.pvd")
    assert [round(e[0], 9) for e in snaps] == [0.0, 0.005, 0.01, 0.015]
    last = dem_vtu.read_vtu(snaps[-1][3])
    assert last["field_data"]["TimeValue"][0] == sim.time  # every field belongs to this time
    order = np.argsort(last["point_data"]["id"].reshape(-1))
    assert np.array_equal(last["points"][order], by_id(sim, sim.positions()))
    assert np.array_equal(last["point_data"]["velocity"][order], by_id(sim, sim.velocities()))
    assert np.array_equal(last["point_data"]["force"][order], by_id(sim, sim.forces()))
    meshes = dem_vtu.read_pvd(tmp_path / "meshes.pvd")
    assert meshes[-1][2] == "floor" and round(meshes[-1][0], 9) == 0.015
    probes = np.genfromtxt(tmp_path / "probes.csv", delimiter=",", names=True)
    assert probes["vy"][-1] == pytest.approx(sim.velocities()[sim.ids() == 1][0, 1], rel=1e-9)
    import json
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["status"] == "completed" and summary["steps"] == sim.step_count


def test_output_reads_in_vtk_and_meshio_as_particles_over_time(tmp_path):
    vtk = pytest.importorskip("vtk", reason="VTK's Python readers are not installed here")
    binary = os.environ.get("DEM_BINARY")
    if not binary:
        pytest.skip("DEM_BINARY (the dem executable) is not set: run through ctest")
    for compression in ("none", "zlib"):
        out = tmp_path / compression
        subprocess.run([binary, "run", str(ROOT / "scenes/demo/demo.yaml"), "--out", str(out), "--quiet",
                        "--set", "simulation.end_time=0.004", "--set", "fills.0.count=100",
                        "--set", "output.snapshot_interval=0.002", "--set", f"output.compression={compression}"],
                       check=True)
        r = vtk.vtkXMLUnstructuredGridReader()
        r.SetFileName(str(out / "particles_000002.vtu"))
        r.Update()
        grid = r.GetOutput()
        assert grid.GetNumberOfPoints() == 100
        ids = grid.GetPointData().GetGlobalIds()
        assert ids is not None and ids.GetName() == "id" and ids.GetNumberOfTuples() == 100
        assert grid.GetFieldData().GetArray("TimeValue").GetValue(0) == pytest.approx(0.004, rel=1e-12)
        m = vtk.vtkXMLUnstructuredGridReader()
        m.SetFileName(str(out / "meshes_000002_1.vtu"))
        m.Update()
        name = m.GetOutput().GetFieldData().GetArray("name")
        assert bytes(name.GetValue(k) for k in range(name.GetNumberOfTuples())).decode() == "blade"
        meshio = pytest.importorskip("meshio")
        mesh = meshio.read(out / "particles_000002.vtu")
        assert len(mesh.points) == 100


def test_diagnostics_over_time_match_the_state(tmp_path):
    """diagnostics.csv per probe interval: the free ball's kinetic energy in closed form, the
    resting ball's static Hertz overlap, contact and coordination numbers, particles added and
    removed; summary.json repeats the last row."""
    import csv
    import json
    scene = ball_scene(output={"probe_interval": 0.002})
    sim = dem.Simulation.from_dict(scene, device="cpu")
    sim.run(until=0.01, output=tmp_path / "a")
    rows = list(csv.DictReader(open(tmp_path / "a" / "diagnostics.csv")))
    assert [round(float(r["t"]), 9) for r in rows] == [0.0, 0.002, 0.004, 0.006, 0.008, 0.01]
    for r in rows:
        t = float(r["t"])
        # the free ball: v(t) = -g (t + dt/2) (the resting one is at rest to round-off)
        assert float(r["kinetic_translational"]) == pytest.approx(0.5 * M * (G * (t + sim.dt / 2)) ** 2, rel=1e-9)
        assert float(r["max_speed"]) == pytest.approx(G * (t + sim.dt / 2), rel=1e-9)
        assert float(r["mean_speed"]) == pytest.approx(G * (t + sim.dt / 2) / 2, rel=1e-6)
        assert float(r["kinetic_rotational"]) < 1e-20
        assert (int(r["particles"]), int(r["touching_pairs"]), int(r["mesh_contacts"])) == (2, 0, 1)
        assert float(r["coordination"]) == 0
        # static Hertz overlap over the radius, to the round-off of its placement
        assert float(r["max_overlap"]) == pytest.approx((0.01 - REST_Y) / 0.01, rel=1e-6)
    summary = json.loads((tmp_path / "a" / "summary.json").read_text())
    assert summary["diagnostics"]["t"] == pytest.approx(0.01) and summary["diagnostics"]["mesh_contacts"] == 1
    # particles in and out are counted; a sphere dropped onto the resting one
    sim.add_particles([[0.3, 0.5, 0], [0, REST_Y + 0.0201, 0]], [0.01, 0.01], "g", velocities=[[0, 0, 0], [0, -0.2, 0]])
    sim.remove_particles([1])
    sim.run(until=0.014, output=tmp_path / "b")
    last = list(csv.DictReader(open(tmp_path / "b" / "diagnostics.csv")))[-1]
    assert (int(last["particles"]), int(last["inserted"]), int(last["removed"])) == (3, 2, 1)
    assert float(last["coordination"]) == pytest.approx(2 * int(last["touching_pairs"]) / 3)
    rows = list(csv.DictReader(open(tmp_path / "b" / "diagnostics.csv")))
    assert max(int(r["touching_pairs"]) for r in rows) == 1  # the dropped sphere hit the resting one


def test_inlets_and_outlets_through_the_module(tmp_path):
    """The silo's inlet and outlet run inside sim.step(): counts add up, ids stay unique across
    module additions, and a checkpoint carries the inflow (same bits after a restart)."""
    scene = ROOT / "scenes/silo/silo.yaml"
    over = {"inlets.feed.min": [-0.02, -0.02, 0.01], "inlets.feed.max": [0.02, 0.02, 0.05], "inlets.feed.rate": 2000,
            "inlets.feed.velocity": [0, 0, -1], "output.snapshot_interval": 0}
    straight = dem.Simulation(scene, over, device="cpu")
    straight.run(until=0.1)
    first = dem.Simulation(scene, over, device="cpu")
    first.run(until=0.05)
    first.write_checkpoint(tmp_path / "c.bin")
    second = dem.Simulation.restart(scene, tmp_path / "c.bin", over, device="cpu")
    second.run(until=0.1)
    assert straight.inserted_particles == 200 and second.inserted_particles == 200
    assert straight.inserted_particles == straight.num_particles + straight.removed_particles
    assert np.array_equal(by_id(straight, straight.positions()), by_id(second, second.positions()))
    new = straight.add_particles([[0, 0, 0.3]], [0.003], "glass")
    assert new[0] == 200  # after the inlet's ids, never one of them
    straight.run(until=0.12)
    ids = straight.ids()
    assert len(set(ids.tolist())) == len(ids) and ids.max() < 241


def test_particles_that_leave_the_domain_leave_the_run_under_on_escape_remove(tmp_path):
    """on_escape: remove through the module as in `dem run`: the particle thrown out through +x
    leaves the run, counted in removed_particles, diagnostics.csv and summary.json, and the run
    goes on; under on_escape: stop (the default) the same escape stops it with the message."""
    scene = ball_scene(domain={"min": [-1, -0.5, -1], "max": [1, 1, 1], "on_escape": "remove"},
                       output={"probe_interval": 0.005})
    scene["particles"][1]["velocity"] = [60, 0, 0]  # at x = 0.5: out through x = 1 after 8.3 ms
    sim = dem.Simulation.from_dict(scene, device="cpu")
    sim.run(until=0.02, output=str(tmp_path))
    assert sim.num_particles == 1 and sim.removed_particles == 1
    assert sim.ids().tolist() == [0]
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["removed_particles"] == 1 and summary["diagnostics"]["removed"] == 1
    # a restart goes on counting the removal, and a sphere the module added (the checkpoint holds both)
    sim.add_particles([[0.3, 0.3, 0]], [0.01], "g")
    sim.write_checkpoint(tmp_path / "c.bin")
    (tmp_path / "scene.yaml").write_text(json.dumps(scene))
    again = dem.Simulation.restart(tmp_path / "scene.yaml", tmp_path / "c.bin", device="cpu")
    assert (again.removed_particles, again.inserted_particles, again.num_particles) == (1, 1, 2)
    scene["domain"]["on_escape"] = "stop"
    stopped = dem.Simulation.from_dict(scene, device="cpu")
    with pytest.raises(dem.SimulationError, match="left the domain"):
        stopped.step(2000)


def test_calls_from_another_thread_wait_for_a_running_step():
    """step(n) releases the GIL; a reader in another thread must see the state between batches,
    never a half-done one: every step count, stats count, time and velocity it reads is that of a
    whole number of batches (the free-falling sphere's velocity changes by g dt = 1e-4 m/s a step,
    against round-off of 1e-12 of it). velocities() copies under the lock; the CPU engine's views
    (positions() and the like) would change under the reader while the other thread steps."""
    import threading
    sim = dem.Simulation.from_dict(ball_scene(), device="cpu")
    batch, batches = 200, 15
    done = threading.Event()

    def stepper():
        try:
            for _ in range(batches):
                sim.step(batch)
        finally:
            done.set()

    dt = sim.dt
    speeds = np.array([-G * (k * dt + dt / 2) for k in range(0, batch * batches + 1, batch)])
    reads = 0
    t = threading.Thread(target=stepper)
    t.start()
    while not done.is_set():
        assert sim.step_count % batch == 0
        assert sim.stats()["steps"] % batch == 0
        assert round(sim.time / dt) % batch == 0
        # the falling sphere's, whatever the particle order (the resting one's is near 0)
        assert np.min(np.abs(speeds - sim.velocities()[:, 1].min())) < 1e-9
        reads += 1
    t.join()
    assert sim.step_count == batch * batches and reads > 1


def test_polyhedra_shapes_and_orientations_through_the_module():
    """A cube turning freely about a principal axis: its orientation a rotation about that axis by
    the angle w t; its shape's faces and vertices as the scene named them."""
    w = 20.0
    scene = {
        "name": "cube",
        "simulation": {"dt": 1e-5, "end_time": 0.01, "gravity": [0, 0, 0]},
        "materials": [{"name": "g", "density": 2500, "youngs_modulus": 1e7, "poisson_ratio": 0.25}],
        "interactions": [{"materials": ["g", "g"], "restitution": 0.5, "normal": "linear", "stiffness": 1e4}],
        "particles": [{"polyhedron": "cube", "size": 0.01, "position": [0, 0, 0], "angular_velocity": [0, 0, w],
                       "material": "g"},
                      {"radius": 0.004, "position": [0.1, 0, 0], "material": "g"}],
    }
    sim = dem.Simulation.from_dict(scene, device="cpu")
    shapes = sim.shapes()
    assert len(shapes) == 1 and len(shapes[0]["faces"]) == 6 and shapes[0]["vertices"].shape == (8, 3)
    # d_v = 1: a cube of side (pi/6)^(1/3), its corners at half that from the centre on each axis
    assert np.allclose(np.abs(shapes[0]["vertices"]), 0.5 * (math.pi / 6) ** (1 / 3), rtol=1e-12)
    assert list(by_id(sim, sim.shape_indices())) == [0, -1]
    sim.step(1000)
    q = by_id(sim, sim.orientations())[0]
    # about a principal axis (for a cube any axis is one) each step turns by the Cayley angle
    # 2 atan(w dt / 2) (core/integrate/rigid_rotation.hpp), w t to (w dt)^2 / 12
    angle = 2 * math.atan2(abs(q[3]), q[0])
    assert angle == pytest.approx(1000 * 2 * math.atan(w * sim.dt / 2), rel=1e-11)
    assert angle == pytest.approx(w * sim.time, rel=(w * sim.dt) ** 2 / 12 * 1.01)
    assert abs(q[1]) < 1e-12 and abs(q[2]) < 1e-12


def test_tags_from_the_scene_retag_and_the_module(tmp_path):
    """Tags as the scene gives them, a retag at its time, tags set from Python, and the tags in the
    snapshot and in mixing.csv."""
    scene = ball_scene(retag=[{"time": 0.005, "tag": 7, "min": [-1, -1, -1], "max": [0.2, 1, 1]}],
                       mixing={"cell_size": 0.1, "min_particles": 1},
                       output={"probe_interval": 0.005, "snapshot_interval": 0.005})
    scene["particles"][1]["tag"] = 3
    sim = dem.Simulation.from_dict(scene, device="cpu")
    assert list(by_id(sim, sim.tags())) == [0, 3]
    seen = []

    def at(s):
        if abs(s.time - 0.005) < 1e-9:
            seen.append(list(by_id(s, s.tags())))  # the resting sphere at x = 0 is in the region
            s.set_tags(np.where(s.ids() == 1, 5, s.tags()))
            with pytest.raises(ValueError, match="2 particles"):
                s.set_tags([1, 2, 3])
            with pytest.raises(ValueError, match="integers"):
                s.set_tags([1.5, 2.0])

    sim.run(until=0.01, every=0.005, callback=at, output=tmp_path)
    assert seen == [[7, 3]]
    assert list(by_id(sim, sim.tags())) == [7, 5]
    rows = (tmp_path / "mixing.csv").read_text().splitlines()
    assert rows[0].startswith("t,tag,fraction")
    assert [r.split(",")[1] for r in rows[1:]] == ["0", "3", "3", "7", "5", "7"]  # t = 0, 0.005, 0.01
    last = dem_vtu.read_vtu(sorted(tmp_path.glob("particles_*.vtu"))[-1])
    assert sorted(last.point_data["tag"].tolist()) == [5, 7]


def test_coarse_grained_fields_through_the_module():
    """The fields of the state now as arrays: the grid holds the particles' mass and momentum, and
    the per-tag solid fractions add up to the solid fraction."""
    scene = ball_scene(domain={"min": [-1, -0.1, -1], "max": [1, 0.5, 1]})
    scene["particles"][1]["tag"] = 2
    sim = dem.Simulation.from_dict(scene, device="cpu")
    sim.step(100)
    f = sim.coarse_grained_fields(width=0.02, cell_size=0.01, kernel="gaussian",
                                  region=[[-0.1, -0.05, -0.05], [0.6, 0.4, 0.05]])
    vc = np.prod(f["spacing"])
    mass = 2 * M
    assert f["density"].sum() * vc == pytest.approx(mass, rel=1e-12)
    momentum = (f["density"][..., None] * f["velocity"]).sum(axis=(0, 1, 2)) * vc
    v = sim.velocities()
    assert momentum == pytest.approx(M * v.sum(axis=0), rel=1e-12, abs=1e-15)
    assert f["kinetic_stress"].shape == f["density"].shape + (3, 3)
    assert np.allclose(f["solid_fraction_tag0"] + f["solid_fraction_tag2"], f["solid_fraction"], rtol=1e-12, atol=0)
    with pytest.raises(ValueError, match="width"):
        sim.coarse_grained_fields(width=0.001, cell_size=0.01, region=[[0, 0, 0], [1, 1, 1]])

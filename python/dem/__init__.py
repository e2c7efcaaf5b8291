"""dem: the DEM engine (spheres and polyhedra against rigid meshes) from Python.

    import dem
    sim = dem.Simulation("scenes/demo/demo.yaml", overrides={"simulation.end_time": 0.2}, device="cpu")
    sim.run(every=0.01, callback=lambda s: print(s.time, s.body_torques()[0]))
    x = sim.positions()            # (n, 3) numpy array, m
    sim.set_body_motion("blade", angular_velocity=[0, 0, 20])

A scene comes from a YAML file, from YAML text, or from a dict with the same keys
(Simulation.from_dict); `overrides` are the CLI's --set entries ("key": value, or "key=value"
strings). device is "cpu" (the OpenMP host engine), "gpu" (the device engine on CUDA), "omp" (the
device engine on Thrust's OpenMP system) or "auto" (the GPU when there is one, else the CPU).

Every state accessor returns the state at the current time `sim.time`: positions, contact forces
and torques, body loads and mesh poses of that time, and velocities advanced to it (the scheme
carries them half a step back: half_step_velocities() are the raw ones). On the CPU engine, ids,
positions, radii, materials, forces, torques and half_step_velocities are read-only views of the
engine's arrays, valid until the next step, add or remove (take numpy.array(v) to keep them);
on a device engine they are copies. The particle order changes as the engine re-sorts: match
particles by ids(), never by index.

Stepping checks the run's health every step as `dem run` does (non-finite values, blow-ups, escapes,
deep overlaps) and raises dem.SimulationError naming the particle; bad input raises dem.InputError
(a ValueError) naming the file, line or key.
"""
from __future__ import annotations

import json
import os
import sys
import time as _time
from typing import Callable, Iterable, Mapping, Optional, Sequence, Union

import numpy as np

from ._dem import InputError, SimulationError, devices_available, _Simulation

__all__ = ["Simulation", "SimulationError", "InputError", "devices_available"]


def _override_list(overrides) -> list[str]:
    if overrides is None:
        return []
    if isinstance(overrides, Mapping):
        # values as YAML flow text (JSON is YAML): lists, numbers, strings, booleans
        return [f"{k}={json.dumps(v)}" for k, v in overrides.items()]
    if isinstance(overrides, str):
        return [overrides]
    return [str(o) for o in overrides]


class Simulation:
    """A scene and the engine that runs it. See the module's help for the conventions."""

    def __init__(self, scene: Union[str, os.PathLike], overrides=None, device: str = "auto",
                 threads: Optional[int] = None, *, _text: bool = False, restart: Optional[str] = None):
        if threads is not None:
            if threads < 1:
                raise ValueError(f"threads must be at least 1 (got {threads})")
            os.environ["OMP_NUM_THREADS"] = str(threads)
            _set_threads(threads)
        if device not in ("cpu", "gpu", "omp", "auto"):
            raise ValueError(f"device must be cpu, gpu, omp or auto (got {device!r})")
        self._s = _Simulation(str(scene) if not _text else scene, _text, _override_list(overrides), device,
                              str(restart) if restart else "")

    @classmethod
    def from_dict(cls, scene: Mapping, overrides=None, device: str = "auto", threads: Optional[int] = None,
                  base_dir: Union[str, os.PathLike, None] = None) -> "Simulation":
        """A scene given as a dict with the keys of a scene file. Relative mesh paths are resolved
        against base_dir (default: the current directory)."""
        text = json.dumps(scene)  # JSON is YAML
        if base_dir is not None:
            text = json.dumps(_resolve_mesh_paths(scene, os.fspath(base_dir)))
        return cls(text, overrides, device, threads, _text=True)

    @classmethod
    def restart(cls, scene: Union[str, os.PathLike], checkpoint: Union[str, os.PathLike], overrides=None,
                device: str = "auto", threads: Optional[int] = None) -> "Simulation":
        """Continues a run from a checkpoint (written by write_checkpoint or `dem run`), with the
        same bits as the run that wrote it would have had. The scene must be the run's."""
        return cls(scene, overrides, device, threads, restart=os.fspath(checkpoint))

    # ---- time
    @property
    def time(self) -> float:
        """Simulated time, s."""
        return self._s.time

    @property
    def step_count(self) -> int:
        return self._s.step_count

    @property
    def dt(self) -> float:
        return self._s.dt

    @property
    def end_time(self) -> float:
        """The scene's simulation.end_time, s (run()'s default end)."""
        return self._s.end_time

    @property
    def name(self) -> str:
        return self._s.name

    @property
    def engine(self) -> str:
        """host-openmp, device-cuda or device-omp."""
        return self._s.engine

    @property
    def device(self) -> str:
        return self._s.device

    def step(self, n: int = 1) -> None:
        """Advances n time steps. The GIL is released meanwhile; a call on this simulation from
        another thread (an accessor, an edit, another step) waits until all n steps are done."""
        if n < 0:
            raise ValueError("n must be >= 0")
        self._s.step(int(n))

    def run(self, until: Optional[float] = None, *, every: Optional[float] = None,
            callback: Optional[Callable[["Simulation"], object]] = None, output: Union[str, os.PathLike, None] = None,
            progress: bool = False) -> None:
        """Steps to simulated time `until` (default: the scene's end_time). With `callback`, calls
        callback(sim) every `every` seconds of simulated time (default: every step) and at the end;
        a callback may read the state, change a body's motion and add or remove particles; it stops
        the run by returning False. With `output`, writes the same files as `dem run` (snapshots,
        probes, bodies.csv, summary.json) into that folder at the scene's output intervals."""
        end = self.end_time if until is None else float(until)
        total = self._s.steps_to(end)
        chunk = max(1, int(round(every / self.dt))) if every else 1
        if output is not None:
            self._s.open_output(os.fspath(output))
        start, done = _time.monotonic(), 0
        try:
            while True:
                left = self._s.steps_to(end)
                if left == 0:
                    break
                k = min(chunk, left)
                self._s.step(k)
                done += k
                if progress:
                    rate = done / max(1e-9, _time.monotonic() - start)
                    eta = (total - done) / rate if rate > 0 else float("inf")
                    print(f"\rdem: step {self.step_count}, t = {self.time:.4g} s, "
                          f"{rate * self.num_particles:.3g} particle-steps/s, ETA {eta:.0f} s", end="",
                          file=sys.stderr, flush=True)
                if callback is not None and callback(self) is False:
                    break
        finally:
            if progress:
                print(file=sys.stderr)
            if output is not None:
                self._s.close_output()

    # ---- state
    @property
    def num_particles(self) -> int:
        return self._s.num_particles

    def ids(self) -> np.ndarray:
        """Particle ids (unique, never reused), in the engine's current order."""
        return self._s.ids()

    def positions(self) -> np.ndarray:
        """(n, 3) centres, m."""
        return self._s.positions()

    def radii(self) -> np.ndarray:
        return self._s.radii()

    def materials(self) -> np.ndarray:
        """Material index of each particle (into material_names)."""
        return self._s.materials()

    def orientations(self) -> np.ndarray:
        """(n, 4) quaternions w, x, y, z from each particle's body frame to the world (a copy)."""
        return self._s.orientations()

    def shape_indices(self) -> np.ndarray:
        """-1 for a sphere, else the polyhedron's index into shapes()."""
        return self._s.shape_indices()

    def tags(self) -> np.ndarray:
        """Each particle's tag (scene keys tag: and retag:; set_tags)."""
        return self._s.tags()

    def set_tags(self, tags) -> None:
        """Sets every particle's tag (integers >= 0, one per particle, in the order of ids() now);
        the trajectory keeps its bits."""
        self._s.set_tags(np.asarray(tags))

    def coarse_grained_fields(self, width: Optional[float] = None, cell_size: Optional[float] = None,
                              kernel: Optional[str] = None, region: Optional[Sequence[Sequence[float]]] = None) -> dict:
        """The coarse-grained fields of the state now (one sample, docs/output.md "Coarse-grained
        fields"): a dict of arrays shaped (nz, ny, nx) or (nz, ny, nx, k) -- solid_fraction,
        density (kg/m^3), velocity (m/s), kinetic_stress, contact_stress and their sum stress (Pa,
        3 x 3: [force component, branch component], compression positive), granular_temperature
        (m^2/s^2), and solid_fraction_tag<k> per tag -- with origin and spacing (m) of the grid.
        (contact_stress and stress are left out at a checkpoint's time before the first step: the
        checkpoint holds each particle's force, not each contact's.)
        The scene's coarse_graining: section gives what is not passed (kernel "lucy" or
        "gaussian", width and cell_size in m, region [min, max])."""
        lo, hi = (None, None) if region is None else (list(map(float, region[0])), list(map(float, region[1])))
        return self._s.coarse_grained_fields(width, cell_size, kernel, lo, hi)

    def shapes(self) -> list:
        """The polyhedral shapes, each a dict in its principal frame at volume-equivalent diameter 1:
        vertices (V, 3), faces (vertex loops, counter-clockwise seen from outside), unit_inertia
        (principal moments over mass, per unit size^2), bounding_radius. A particle's vertices are
        x + size R(q) v with size = radius / bounding_radius."""
        return self._s.shapes()

    def velocities(self) -> np.ndarray:
        """(n, 3) velocities at the current time, m/s (a copy)."""
        return self._s.velocities()[0]

    def angular_velocities(self) -> np.ndarray:
        """(n, 3) angular velocities at the current time, rad/s (a copy)."""
        return self._s.velocities()[1]

    def half_step_velocities(self) -> np.ndarray:
        """The velocities the scheme carries, v(t - dt/2)."""
        return self._s.half_step_velocities()

    def forces(self) -> np.ndarray:
        """(n, 3) total contact force on each particle at the current time, N (no gravity)."""
        return self._s.forces()

    def torques(self) -> np.ndarray:
        """(n, 3) total contact torque on each particle at the current time, N m."""
        return self._s.torques()

    def contact_counts(self) -> tuple[int, int]:
        """(touching sphere pairs, sphere-mesh contacts) at the current time."""
        return self._s.contact_counts()

    def max_overlap(self) -> float:
        """The deepest contact now: overlap over the smaller radius (over the radius for a wall)."""
        return self._s.max_overlap()

    def stats(self) -> dict:
        return self._s.stats()

    # ---- bodies
    @property
    def body_names(self) -> list[str]:
        return self._s.body_names

    @property
    def material_names(self) -> list[str]:
        return self._s.material_names

    def body_forces(self) -> np.ndarray:
        """(bodies, 3) force the particles exert on each mesh body at the current time, N."""
        return self._s.body_forces()

    def body_torques(self) -> np.ndarray:
        """(bodies, 3) torque the particles exert on each body about its rotation centre, N m."""
        return self._s.body_torques()

    def body_center(self, body: Union[int, str]) -> np.ndarray:
        """A body's rotation centre at the current time, m."""
        return np.array(self._s.body_center(body))

    def body_motion(self, body: Union[int, str]) -> tuple[np.ndarray, np.ndarray]:
        """(velocity m/s, angular velocity rad/s) of a body now."""
        v, w = self._s.body_motion(body)
        return np.array(v), np.array(w)

    def set_body_motion(self, body: Union[int, str], velocity: Sequence[float] = (0, 0, 0),
                        angular_velocity: Sequence[float] = (0, 0, 0)) -> None:
        """From now on the body (name or index) moves at `velocity` and spins at
        `angular_velocity` about its centre, starting from its present pose (no jump)."""
        self._s.set_body_motion(body, np.asarray(velocity, dtype=float), np.asarray(angular_velocity, dtype=float))

    # ---- particles in and out
    def add_particles(self, positions, radii, material: str, velocities=None, angular_velocities=None) -> np.ndarray:
        """Adds spheres (none may overlap a particle or each other) and returns their new ids."""
        pos = np.asarray(positions, dtype=float).reshape(-1, 3)
        rad = np.asarray(radii, dtype=float).reshape(-1)
        vel = None if velocities is None else np.asarray(velocities, dtype=float).reshape(-1, 3)
        ang = None if angular_velocities is None else np.asarray(angular_velocities, dtype=float).reshape(-1, 3)
        return np.array(self._s.add_particles(pos, rad, vel, ang, material), dtype=np.int64)

    def remove_particles(self, ids: Iterable[int]) -> int:
        """Removes the particles with these ids (unknown ids are ignored); returns how many went."""
        return self._s.remove_particles([int(i) for i in np.asarray(list(ids)).reshape(-1)])

    @property
    def removed_particles(self) -> int:
        return self._s.removed_particles

    @property
    def inserted_particles(self) -> int:
        return self._s.inserted_particles

    # ---- checkpoints
    def write_checkpoint(self, path: Union[str, os.PathLike]) -> None:
        """Everything the next step needs (checkpoint format of `dem run`), for Simulation.restart."""
        self._s.write_checkpoint(os.fspath(path))


def _resolve_mesh_paths(scene: Mapping, base: str) -> dict:
    out = json.loads(json.dumps(scene))
    for mesh in out.get("meshes", []) or []:
        f = mesh.get("file") if isinstance(mesh, dict) else None
        if isinstance(f, str) and not os.path.isabs(f):
            mesh["file"] = os.path.join(base, f)
    return out


def _set_threads(n: int) -> None:
    from . import _dem
    if hasattr(_dem, "set_threads"):
        _dem.set_threads(n)

"""The coarse-grained stress against the momentum balance (docs/output.md, "Coarse-grained fields"):
a static column carries the weight of what lies above it (2 %), and the steady chute flow of
scenes/chute carries the weight across each plane, its shear stress tan(theta) times its normal
stress (3 %; Silbert et al., Phys. Rev. E 64 (2001) 051302). Both are fields averaged over samples,
horizontally averaged over the periodic x and y; sigma is compression positive, [force, branch]:
(sigma_xz, sigma_yz, sigma_zz) is the force per area the material below a plane exerts on the
material above it."""
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import dem

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))
import dem_vtu  # noqa: E402

D = 0.004  # m: the beads' mean diameter in both scenes


def weight_above(rho, h, g):
    """Per area, the weight of what lies above each cell's centre: the cells above it whole and
    half its own (cell averages of a profile that varies slowly over a cell)."""
    return g * (np.cumsum(rho[::-1])[::-1] - rho / 2) * h


def test_a_static_column_carries_the_weight_of_what_lies_above():
    g = 9.81
    scene = {
        "name": "column",
        "simulation": {"dt": 2e-5, "end_time": 1.0, "gravity": [0, 0, -g]},
        "domain": {"min": [0, 0, -0.01], "max": [0.03, 0.03, 0.3], "periodic": ["x", "y"]},
        "materials": [{"name": "glass", "density": 2500, "youngs_modulus": 5e6, "poisson_ratio": 0.25},
                      {"name": "wall", "youngs_modulus": "inf", "poisson_ratio": 0.3}],
        "interactions": [{"materials": ["glass", "glass"], "friction": 0.5, "restitution": 0.3},
                         {"materials": ["glass", "wall"], "friction": 0.5, "restitution": 0.3}],
        "fills": [{"shape": "box", "pattern": "random", "min": [0, 0, 0.0025], "max": [0.03, 0.03, 0.2],
                   "count": 1500, "radius": {"distribution": "uniform", "min": 0.0018, "max": 0.0022},
                   "material": "glass", "seed": 5}],
        "meshes": [{"name": "floor", "material": "wall", "faces": [[0, 1, 2, 3]],
                    "vertices": [[0, 0, 0], [0.03, 0, 0], [0.03, 0.03, 0], [0, 0.03, 0]]}],
    }
    sim = dem.Simulation.from_dict(scene)
    sim.run(1.0)  # poured and settled (the fastest bead below 1 cm/s)
    assert np.abs(sim.velocities()).max() < 0.01
    region = [[0, 0, -0.005], [0.03, 0.03, 0.2]]
    total = None
    for k in range(10):
        sim.run(1.0 + 0.02 * (k + 1))  # (the bed still breathes a little: 0.2 s of it)
        f = sim.coarse_grained_fields(width=0.004, cell_size=0.002, kernel="lucy", region=region)
        total = {q: np.array(f[q]) for q in ("density", "stress")} if total is None else \
            {q: total[q] + f[q] for q in total}
    rho = total["density"].mean(axis=(1, 2)) / 10
    szz = total["stress"][..., 2, 2].mean(axis=(1, 2)) / 10
    h, z0 = f["spacing"][2], f["origin"][2]
    z = z0 + (np.arange(len(rho)) + 0.5) * h
    top = z[rho > 0.5 * np.median(rho[rho > 0])].max()
    inside = (z > 2 * D) & (z < top - 2 * D)
    assert inside.sum() > 30
    ratio = szz[inside] / weight_above(rho, h, g)[inside]
    assert np.all(np.abs(ratio - 1) < 0.02), ratio
    # at rest, no shear across horizontal planes
    sxz = total["stress"][..., 0, 2].mean(axis=(1, 2)) / 10
    assert np.all(np.abs(sxz[inside]) < 0.02 * szz[inside])


@pytest.mark.skipif(not os.environ.get("DEM_BINARY"), reason="needs the dem binary (DEM_BINARY; ctest sets it)")
def test_the_steady_chute_flow_keeps_the_momentum_balance(tmp_path):
    # scenes/chute with fields averaged over windows of 0.2 s from samples every 2 ms
    window = 0.2
    text = (ROOT / "scenes/chute/chute.yaml").read_text()
    text = text.replace("output: {snapshot_interval: 0.05, probe_interval: 0.01}",
                        "output: {snapshot_interval: 0, probe_interval: 0.1}\n"
                        f"coarse_graining: {{kernel: lucy, width: {D}, cell_size: 0.002, interval: {window}, "
                        "sample_interval: 0.002, min: [0, 0, -0.005], max: [0.08, 0.04, 0.12]}\n")
    assert "coarse_graining" in text
    scene = tmp_path / "chute.yaml"
    scene.write_text(text)
    end = 3.0
    r = subprocess.run([os.environ["DEM_BINARY"], "run", str(scene), "--out", str(tmp_path / "run"), "-q",
                        "--set", f"simulation.end_time={end}"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    files = sorted((tmp_path / "run").glob("fields_*.vti"))
    assert len(files) == round(end / window) + 1  # (the first at t = 0, one sample)
    fields = [dem_vtu.read_vti(f) for f in files[1:]]
    # each window's mean speed down the slope (the mass-weighted mean velocity of the grid, the
    # glued base included); steady: the first window whose mean differs from the one before by
    # less than 0.5 %
    speed = [np.sum(f.cell_data["density"] * f.cell_data["velocity"][..., 0]) / np.sum(f.cell_data["density"])
             for f in fields]
    change = np.abs(np.diff(speed)) / np.array(speed[1:])
    steady = np.nonzero(change < 0.005)[0]
    assert len(steady) > 0, f"not steady by t = {end} s: mean speeds {speed}"
    f = fields[steady[0] + 1]
    g = np.array([3.99, 0, -8.96])  # the scene's gravity: 24 degrees down x
    tan_theta = g[0] / -g[2]
    rho = f.cell_data["density"].mean(axis=(1, 2))
    stress = f.cell_data["stress"].mean(axis=(1, 2)).reshape(-1, 3, 3)
    h, z0 = f.spacing[2], f.origin[2]
    z = z0 + (np.arange(len(rho)) + 0.5) * h
    top = z[rho > 0.5 * np.median(rho[rho > 0])].max()
    base = 0.0054  # the glued layer's top
    inside = (z > base + 2 * D) & (z < top - 2 * D)
    assert inside.sum() >= 8
    szz = stress[:, 2, 2]
    ratio_zz = szz[inside] / weight_above(rho, h, -g[2])[inside]
    assert np.all(np.abs(ratio_zz - 1) < 0.03), ratio_zz
    # the material above a plane is held back against the slope (+x): sigma_xz = -tan(theta) sigma_zz
    ratio_xz = -stress[:, 0, 2][inside] / (tan_theta * szz[inside])
    assert np.all(np.abs(ratio_xz - 1) < 0.03), ratio_xz

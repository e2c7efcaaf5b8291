# The poured cubes of scenes/polyhedra/poured_cubes.yaml from dem's state, in YADE's Polyhedra
# (bench/peers/polyhedra/compare.sh runs it as `yade -j THREADS -n -x yade_cubes.py STATE STEPS
# YOUNG DAMPING SKIN`): the polyhedra with dem's vertices, masses, velocities and angular
# velocities; the box's floor and four sides as walls; YADE's volumetric law (normal force = kn *
# overlap volume, kn from `young`, the tangential stiffness `poisson` times it, Coulomb friction
# 0.5) with NewtonIntegrator's local damping, as YADE's Polyhedra examples run it (the law has no
# viscous damping); the insertion-sort collider with Verlet distance SKIN. Prints the wall time of
# STEPS steps and the mean polyhedron-polyhedron contacts per particle.
import math
import os
import sys
import time

from yade import polyhedra_utils

sys.path.insert(0, os.path.dirname(os.path.abspath(sys.argv[0])))
import peer_inputs  # noqa: E402

state, steps, young, damping, skin = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4]), float(sys.argv[5])
particles = peer_inputs.read_state(state)
grain = PolyhedraMat(density=2500, young=young, poisson=0.5, frictionAngle=math.atan(0.5))
O.materials.append(grain)
for p in particles:
    b = polyhedra_utils.polyhedra(grain, v=[Vector3(*(p["x"] + v)) for v in p["vertices"]])
    b.state.vel = Vector3(*p["v"])
    b.state.angVel = Vector3(*p["w"])
    O.bodies.append(b)
walls = [utils.wall(0, axis=2, sense=1, material=grain)]
for axis in (0, 1):
    walls += [utils.wall(-0.05, axis=axis, sense=1, material=grain), utils.wall(0.05, axis=axis, sense=-1, material=grain)]
O.bodies.append(walls)

O.engines = [
    ForceResetter(),
    InsertionSortCollider([Bo1_Polyhedra_Aabb(), Bo1_Wall_Aabb()], verletDist=skin),
    InteractionLoop([Ig2_Wall_Polyhedra_PolyhedraGeom(), Ig2_Polyhedra_Polyhedra_PolyhedraGeom()],
                    [Ip2_PolyhedraMat_PolyhedraMat_PolyhedraPhys()], [Law2_PolyhedraGeom_PolyhedraPhys_Volumetric()]),
    NewtonIntegrator(damping=damping, gravity=(0, 0, -9.81)),
]
O.dt = 2e-5


def contacts():
    n = sum(1 for i in O.interactions if i.isReal and i.id1 < len(particles) and i.id2 < len(particles))
    return 2.0 * n / len(particles)


O.run(1, True)  # (the first step finds the contacts: left out of the window, as dem's setup is)
c0 = contacts()
t = time.time()
O.run(steps, True)
wall = time.time() - t
c1 = contacts()
speeds = [b.state.vel.norm() for b in O.bodies if b.id < len(particles)]
print(f"yade: {steps} steps in {wall:.3f} s; contacts per particle {0.5 * (c0 + c1):.3f}; "
      f"largest speed {max(speeds):.3g} m/s")
sys.exit(0)

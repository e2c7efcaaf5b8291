# shellcheck shell=bash
# Sourced by bench/peers/lammps/compare.sh and bench/mpi_scaling.sh: the variables of in.bed for the
# glass of scenes/bed/bed.yaml (E = 5e6 Pa, nu = 0.25, rho = 2500 kg/m^3, e = 0.5, mu = 0.5,
# rolling friction 0.01, radius 2 mm +-10 %), the classic style's springs and damping for two equal
# 2 mm beads.
#   lammps_bed_vars DATAFILE STEPS SKIN     sets the array lammps_vars (add -var style classic|granular)
lammps_bed_vars() {
  local dt kn kt gn gt
  read -r dt kn kt gn gt < <(/usr/bin/env python3 - <<'PY'
import math
E, nu, rho, e, R = 5e6, 0.25, 2500.0, 0.5, 0.002
Es = 1 / (2 * (1 - nu * nu) / E)                  # E* of two equal spheres
G = E / (2 * (1 + nu)); Gs = 1 / (2 * (2 - nu) / G)
Rs = R / 2; m = rho * 4 / 3 * math.pi * R ** 3; ms = m / 2
delta = 0.01 * Rs                                 # the overlap the damping is matched at
beta = abs(math.log(e)) / math.sqrt(math.log(e) ** 2 + math.pi ** 2)
cn = 2 * math.sqrt(5 / 6) * beta * math.sqrt(2 * Es * math.sqrt(Rs * delta) * ms)   # ours, N s/m
gn = cn / (ms * math.sqrt(Rs * delta))            # LAMMPS: damping force sqrt(delta R*) m* gn vn
print(2e-5, 4 / 3 * Es, 8 * Gs, gn, gn / 2)
PY
  )
  # shellcheck disable=SC2034  # (the caller's)
  lammps_vars=(-var datafile "$1" -var steps "$2" -var dt "$dt" -var skin "$3"
    -var kn "$kn" -var kt "$kt" -var gn "$gn" -var gt "$gt" -var mu 0.5
    -var E 5e6 -var e 0.5 -var nu 0.25 -var kr 500 -var gr 0 -var mur 0.01)
}

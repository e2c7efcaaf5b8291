# CUDA detection for DEM_ENABLE_CUDA=AUTO|ON|OFF.
# project() declares only CXX; CUDA is enabled here when allowed and found, so an OFF or
# nvcc-less build never needs a CUDA toolkit. The architecture list is explicit (never "native",
# which fails at configure time on machines without a GPU, as CI is).
set(DEM_ENABLE_CUDA "AUTO" CACHE STRING "Build the CUDA backend: AUTO (if nvcc is found), ON, OFF")
set_property(CACHE DEM_ENABLE_CUDA PROPERTY STRINGS AUTO ON OFF)

set(DEM_HAVE_CUDA OFF)
if(NOT DEM_ENABLE_CUDA STREQUAL "OFF")
  if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES OR CMAKE_CUDA_ARCHITECTURES STREQUAL "")
    set(CMAKE_CUDA_ARCHITECTURES 90 CACHE STRING "CUDA architectures (default 90: H100/H200)")
  endif()
  if(CMAKE_CUDA_ARCHITECTURES MATCHES "native|all")
    message(FATAL_ERROR "CMAKE_CUDA_ARCHITECTURES=${CMAKE_CUDA_ARCHITECTURES}: use an explicit list "
                        "(e.g. 90); configuration must work on machines without a GPU")
  endif()
  if(NOT CMAKE_CUDA_COMPILER AND EXISTS /usr/local/cuda/bin/nvcc)
    set(CMAKE_CUDA_COMPILER /usr/local/cuda/bin/nvcc)
  endif()
  include(CheckLanguage)
  check_language(CUDA)
  if(CMAKE_CUDA_COMPILER)
    enable_language(CUDA)
    find_package(CUDAToolkit REQUIRED)
    set(DEM_HAVE_CUDA ON)
  elseif(DEM_ENABLE_CUDA STREQUAL "ON")
    message(FATAL_ERROR "DEM_ENABLE_CUDA=ON but no CUDA compiler (nvcc) was found")
  endif()
endif()
message(STATUS "DEM: CUDA backend ${DEM_HAVE_CUDA} (DEM_ENABLE_CUDA=${DEM_ENABLE_CUDA}, "
               "architectures ${CMAKE_CUDA_ARCHITECTURES})")

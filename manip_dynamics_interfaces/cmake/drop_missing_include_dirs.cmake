# Copyright 2026 The manip_dynamics Authors
#
# Licensed under the Apache License, Version 2.0 (the "License");
# you may not use this file except in compliance with the License.
# You may obtain a copy of the License at
#
#     http://www.apache.org/licenses/LICENSE-2.0
#
# Unless required by applicable law or agreed to in writing, software
# distributed under the License is distributed on an "AS IS" BASIS,
# WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
# See the License for the specific language governing permissions and
# limitations under the License.

# Workaround for ROS 2 built from PyPI wheels: some exported targets of the message packages
# (e.g. service_msgs, rmw_dds_common) list an include directory of the machine the wheels were
# built on (/opt/python/cp311-cp311/include/python3.11). CMake's generate step rejects
# non-existent INTERFACE_INCLUDE_DIRECTORIES of imported targets, so drop the entries that do
# not exist. On an apt-installed ROS every entry exists and nothing changes.
get_property(_md_imported_targets DIRECTORY PROPERTY IMPORTED_TARGETS)
foreach(_md_target IN LISTS _md_imported_targets)
  get_target_property(_md_dirs ${_md_target} INTERFACE_INCLUDE_DIRECTORIES)
  if(NOT _md_dirs)
    continue()
  endif()
  set(_md_kept "")
  set(_md_changed FALSE)
  foreach(_md_dir IN LISTS _md_dirs)
    # Keep generator expressions untouched; drop absolute paths that do not exist.
    if(_md_dir MATCHES "^\\$<" OR NOT IS_ABSOLUTE "${_md_dir}" OR EXISTS "${_md_dir}")
      list(APPEND _md_kept "${_md_dir}")
    else()
      set(_md_changed TRUE)
    endif()
  endforeach()
  if(_md_changed)
    message(STATUS "${PROJECT_NAME}: dropping missing include dirs of ${_md_target}")
    set_target_properties(${_md_target} PROPERTIES INTERFACE_INCLUDE_DIRECTORIES "${_md_kept}")
  endif()
endforeach()

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

"""
Exception types raised by the manip_dynamics library.

Every error is a :class:`ValueError` subclass so callers that only know the
standard library can still catch it; the message always names the offending
joint, link, URDF element or argument.
"""


class ManipDynamicsError(ValueError):
    """Base class of every error the library raises on bad input."""


class URDFError(ManipDynamicsError):
    """The URDF is malformed or describes something this library cannot model."""


class InputError(ManipDynamicsError):
    """A call received a bad argument: wrong shape, NaN/inf, unknown name."""

"""A package's share folder from the ament index, without importing ament_index_python (its
import is a millisecond of every offline command's start-up)."""
from __future__ import annotations

import os
from typing import Optional


def package_share(package: str) -> Optional[str]:
    """``<prefix>/share/<package>`` of the first ``AMENT_PREFIX_PATH`` prefix whose ament index
    marks the package (what ``get_package_share_directory`` finds); None when none does."""
    for prefix in os.environ.get('AMENT_PREFIX_PATH', '').split(os.pathsep):
        if prefix and os.path.isfile(os.path.join(prefix, 'share', 'ament_index',
                                                  'resource_index', 'packages', package)):
            return os.path.join(prefix, 'share', package)
    return None

"""Is a judge endpoint inside the tenant? Hosts, `*.suffix` patterns and CIDR ranges."""

from __future__ import annotations

import ipaddress
from urllib.parse import urlparse


def host_allowed(url: str, allowed: list[str]) -> bool:
    host = (urlparse(url).hostname or "").lower()
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        address = None
    for pattern in allowed:
        pattern = pattern.lower()
        if "/" in pattern:
            if address is not None and address in ipaddress.ip_network(pattern, strict=False):
                return True
        elif pattern.startswith("*."):
            if host.endswith(pattern[1:]):
                return True
        elif host == pattern:
            return True
    return False

"""Redis Cluster URLs: `redis+cluster://[user:password@]host:port[,host:port...][?option=value...]`,
and `rediss+cluster://` for TLS.

A cluster URL may name several seed nodes, comma-separated, so the bot still finds the cluster while
one of them is down; from whichever seed answers it learns every master and which slots each serves.
A database number is refused: a cluster has database 0 only.
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import urlsplit, urlunsplit

# Each cluster scheme, and the single-node scheme whose settings (credentials, TLS, options) it shares.
CLUSTER_SCHEMES = {"redis+cluster": "redis", "rediss+cluster": "rediss"}
DEFAULT_PORT = 6379


@dataclass(frozen=True)
class ClusterUrl:
    seeds: tuple[tuple[str, int], ...]  # (host, port) of each node to ask for the cluster's layout
    # The first seed as a plain redis:// or rediss:// URL with the same credentials and options:
    # redis-py's own URL parser reads the connection settings from it.
    node_url: str


def is_cluster_url(url: str) -> bool:
    return urlsplit(url).scheme.lower() in CLUSTER_SCHEMES


def parse_cluster_url(url: str) -> ClusterUrl:
    """The seeds and connection settings of a cluster URL; ValueError says what is wrong with it."""
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    if scheme not in CLUSTER_SCHEMES:
        raise ValueError(f"not a cluster URL: it must start with {' or '.join(s + '://' for s in CLUSTER_SCHEMES)}")
    credentials, _, hosts = parts.netloc.rpartition("@")
    seeds = tuple(_seed(text) for text in hosts.split(","))
    if parts.path not in ("", "/", "/0"):
        raise ValueError("a Redis Cluster has database 0 only: leave the database number out of the URL")
    first = hosts.split(",")[0]
    netloc = f"{credentials}@{first}" if credentials else first
    return ClusterUrl(seeds=seeds, node_url=urlunsplit((CLUSTER_SCHEMES[scheme], netloc, "", parts.query, "")))


def _seed(text: str) -> tuple[str, int]:
    parts = urlsplit(f"//{text.strip()}")
    try:
        port = parts.port or DEFAULT_PORT
    except ValueError:
        raise ValueError(f"seed node {text!r} has no valid port") from None
    if not parts.hostname:
        raise ValueError(f"seed node {text!r} has no host: list them as host:port,host:port")
    return parts.hostname, port

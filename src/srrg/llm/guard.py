"""Privacy guard: nothing leaves the machine unless the config says so, and keys stay in the environment.

Reports under a data-use agreement (MIMIC-CXR) must not reach a third-party API by accident: an
endpoint that is not on this host is refused unless `llm.allow_remote: true`.
"""

from __future__ import annotations

import ipaddress
import os
from urllib.parse import urlsplit

from srrg.llm.config import LLMConfig

OPENAI_DEFAULT_URL = "https://api.openai.com/v1"


class PrivacyError(RuntimeError):
    """Raised before any request is sent to an endpoint the config did not allow."""


def is_local_url(url: str) -> bool:
    """True for loopback endpoints (localhost, 127.0.0.0/8, ::1) only."""
    host = urlsplit(url).hostname or ""
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def check_endpoint(cfg: LLMConfig) -> str:
    """The endpoint URL the openai backend may use, or PrivacyError when it is remote and not allowed."""
    url = cfg.base_url or OPENAI_DEFAULT_URL
    if not is_local_url(url) and not cfg.allow_remote:
        raise PrivacyError(
            f"llm endpoint {url} is not on this host; set llm.allow_remote: true to send the declared "
            f"prompt fields there (check your data-use agreement first)"
        )
    return url


def api_key(cfg: LLMConfig) -> str:
    """The key from the environment variable named in the config.

    Loopback servers (llama.cpp, vLLM, Ollama) usually need no key, so an unset variable gives a
    placeholder there; a remote endpoint without a key is an error that names the variable.
    """
    value = os.environ.get(cfg.api_key_env, "")
    if value:
        return value
    if is_local_url(cfg.base_url or OPENAI_DEFAULT_URL):
        return "no-key"
    raise PrivacyError(f"environment variable {cfg.api_key_env} (llm.api_key_env) is not set")


def redact(text: str, secret: str) -> str:
    """Remove a secret from an error message before it is logged or stored."""
    return text.replace(secret, "***") if secret and len(secret) > 3 else text

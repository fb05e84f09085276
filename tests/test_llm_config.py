"""`llm.config.endpoint_config`: the one rule for which key goes to which endpoint, shared by
`tabpilot run` and the native host (their subprocess tests send real requests to two scripted servers)."""

from __future__ import annotations

from tabpilot.llm.config import DEFAULT_BASE_URL, endpoint_config

FILE = {"settings_base_url": "http://file.test/v1", "settings_model": "file-model", "settings_api_key": "sk-file"}
ENV = {"OPENAI_BASE_URL": "http://env.test/v1/", "OPENAI_API_KEY": "sk-env"}


def test_without_overrides_each_source_keeps_its_own_pairing() -> None:
    config = endpoint_config(**FILE, environ={})
    assert (config.base_url, config.model, config.api_key) == ("http://file.test/v1", "file-model", "sk-file")
    assert endpoint_config(**FILE, environ=ENV).api_key == "sk-file"  # the host: the file first
    on_the_command_line = endpoint_config(**FILE, environ=ENV, environment_first=True)
    assert (on_the_command_line.base_url, on_the_command_line.api_key) == ("http://env.test/v1", "sk-env")


def test_an_endpoint_named_without_a_key_gets_none_of_the_users_keys() -> None:
    for environment_first in (False, True):
        config = endpoint_config(**FILE, base_url="http://other.test/v1", environ=ENV,
                                 environment_first=environment_first)
        assert config.base_url == "http://other.test/v1" and config.api_key is None
        assert config.key_from_environment is False  # resolve() will not add OPENAI_API_KEY either


def test_a_key_given_with_the_override_goes_with_it() -> None:
    config = endpoint_config(**FILE, base_url="http://other.test/v1", api_key="sk-given", environ=ENV)
    assert config.api_key == "sk-given"


def test_the_environment_key_goes_only_to_the_environment_endpoint_or_the_default() -> None:
    settings = {"settings_base_url": None, "settings_model": "m", "settings_api_key": None}
    assert endpoint_config(**settings, environ={"OPENAI_API_KEY": "sk-env"}).base_url == DEFAULT_BASE_URL
    assert endpoint_config(**settings, environ={"OPENAI_API_KEY": "sk-env"}).api_key == "sk-env"
    assert endpoint_config(**settings, base_url="http://env.test/v1", environ=ENV).api_key == "sk-env"
    no_env_base = endpoint_config(**{**settings, "settings_base_url": "http://file.test/v1"},
                                  environ={"OPENAI_API_KEY": "sk-env"})
    assert no_env_base.api_key is None  # the file's endpoint is not where OPENAI_API_KEY belongs

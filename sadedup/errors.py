"""The one exception type users see: its message is the one line the CLI prints."""


class SadedupError(Exception):
    """A problem with the user's input, configuration or environment, said in one line."""


class ConfigError(SadedupError):
    """A workflow key is unknown, has the wrong type, or a value is out of range."""

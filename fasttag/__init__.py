"""fasttag: fast trainable sequence taggers with a Cython core."""
from .errors import FasttagError, InputError, ModelFormatError

__version__ = "0.1.0"

__all__ = ["FasttagError", "InputError", "ModelFormatError", "__version__"]

"""A word table ({word: short string}) inside a model file: UTF-8
``value<TAB>word`` lines, by word, in a byte array, every line checked when
read back.  Brown clusters and ambiguity classes are stored this way."""
import numpy as np

from ..errors import ModelFormatError

__all__ = ["table_to_array", "table_from_array"]


def table_to_array(table):
    """The ``value<TAB>word`` lines of ``table`` as a uint8 array."""
    text = "".join(f"{v}\t{w}\n" for w, v in sorted(table.items()))
    return np.frombuffer(text.encode("utf-8", "surrogatepass"), dtype=np.uint8).copy()


def table_from_array(array, what, unit, value, valid):
    """{word: value} of an array from :func:`table_to_array`.  Anything else
    is a ModelFormatError naming ``what`` (the table, e.g. "the clusters")
    or the line at fault ("``unit`` line N is not ``value``<TAB>word");
    ``valid(v)`` says whether a value is well formed."""
    if not isinstance(array, np.ndarray) or array.dtype != np.uint8 or array.ndim != 1:
        raise ModelFormatError(f"corrupt fasttag model: {what} are not a byte array")
    try:
        text = array.tobytes().decode("utf-8", "surrogatepass")
    except UnicodeDecodeError:
        raise ModelFormatError(f"corrupt fasttag model: {what} are not UTF-8") from None
    if text and not text.endswith("\n"):
        raise ModelFormatError(f"corrupt fasttag model: {what} are cut short")
    table = {}
    for n, line in enumerate(text.split("\n")[:-1], start=1):
        v, sep, w = line.partition("\t")
        if not sep or not valid(v) or not w or "\t" in w or w in table:
            raise ModelFormatError(f"corrupt fasttag model: {unit} line {n} is not {value}<TAB>word")
        table[w] = v
    return table

"""layoutx from Python: each verb of the `layoutx` command line as a function.

``layoutx.select(precision='w4a16', ctx=[4096])`` runs ``layoutx select --precision w4a16
--ctx 4096 --json`` in process and returns the JSON document as a dict. Keyword arguments are
the verb's flags with dashes as underscores (``--fidelity-slack-db`` -> ``fidelity_slack_db``);
a flag that takes no value is a bool; a repeatable flag takes a list (or one value); a
positional argument (``ingest``'s files) takes a list. Errors raise :class:`layoutx.Error`
with the command line's message (what ``layoutx`` prints on stderr when it exits 2). Exit
status 1 (``regress`` found a regression) is not an error: the document says so. Calls hold
the GIL and run one at a time (the app prints to std::cout, redirected for the call).

The functions have no logic of their own: the argument list goes to the same app the
executable runs (cli/app.h). ``layoutx.torch`` holds the PyTorch form of each layer variant.
"""
import json as _json
import sys as _sys

from . import _layoutx

__all__ = ["Error", "run"]


class Error(Exception):
    """What the command line reports on exit status 2; str() is its message."""


def run(*args):
    """Runs ``layoutx ARGS...`` in process: returns (exit status, stdout, stderr) as text.

    The arguments are given one by one (``run("select", "--json")``) or as one list or tuple
    (``run(["select", "--json"])``). Ctrl-C stops a long check with KeyboardInterrupt."""
    if len(args) == 1 and isinstance(args[0], (list, tuple)):
        args = tuple(args[0])
    return _layoutx.run(_checked([str(a) for a in args]))


def _checked(args):
    """The argument list, with a TypeError or ValueError for what the command line cannot take."""
    for i, a in enumerate(args):
        if "\0" in a:
            raise ValueError(f"argument {i + 1} ({a.split(chr(0))[0]!r}...) contains a NUL character, "
                             "which no command-line argument can hold")
    return args


def _python_name(flag):
    return flag.replace("-", "_")


def _arguments(verb, options, kwargs):
    """The command line of one call: VERB --json, then each keyword argument as its flag."""
    by_name = {_python_name(o["name"]): o for o in options}
    args = [verb, "--json"]
    positionals = []
    for name, value in kwargs.items():
        o = by_name[name]
        if value is None:
            continue
        if o["positional"]:
            positionals += [str(v) for v in (value if isinstance(value, (list, tuple)) else [value])]
        elif o["flag"]:
            if not isinstance(value, bool):
                raise TypeError(f"{name}: takes True or False (the flag --{o['name']}), "
                                f"got {type(value).__name__} {value!r}")
            if value:
                args.append("--" + o["name"])
        else:
            values = value if isinstance(value, (list, tuple)) else [value]
            for v in values:
                args += ["--" + o["name"], str(v)]
    if positionals:
        args += ["--"] + positionals
    return args


def _call(verb, options, kwargs):
    status, out, err = _layoutx.run(_checked(_arguments(verb, options, kwargs)))
    if status == 2:
        raise Error(err.strip())
    if err:
        _sys.stderr.write(err)
    return _json.loads(out)


def _make_verb(spec):
    name = spec["name"]
    params = [_python_name(o["name"]) for o in spec["options"] if o["name"] != "json"]
    # A real function with keyword-only parameters (so help() and inspect show the flags),
    # made from text: building inspect.Signature objects instead costs the import of inspect.
    source = f"def {name}(*, {', '.join(p + '=None' for p in params)}):\n    return _call(_name, _options, locals())\n"
    scope = {"_call": _call, "_name": name, "_options": spec["options"]}
    exec(source, scope)
    verb = scope[name]
    verb.__module__ = __name__
    verb.__doc__ = (
        f"Runs `layoutx {name} ... --json` in process and returns its document as a dict; "
        "raises layoutx.Error with the command line's message. Keyword arguments are the flags "
        "below, dashes as underscores.\n\n" + spec["help"]
    )
    return verb


for _spec in _layoutx.verbs():
    globals()[_spec["name"]] = _make_verb(_spec)
    __all__.append(_spec["name"])
del _spec

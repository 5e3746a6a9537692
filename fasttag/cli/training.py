"""``fasttag train TASK``: the task's options, files and output checked
before any work, then the task class's ``train`` (on Dask with ``--dask``
or ``--scheduler``) and the model saved, also when Ctrl-C stops it."""
import contextlib
import os
import sys
from pathlib import Path

from ..errors import InputError, TrainingInterrupted, WorkersLost
from ..model import options, registry
from ..parallel import available_cores
from .messages import say
from .parser import given_options
from .paths import check_output, input_path, model_path


def train_command(args):
    task = registry.TASKS[args.task]
    cls, kwargs = task.cls, dict(task.keywords)
    given = given_options(args, [o.name for o in options.for_cli(args.task, "train")])
    # options first, then the files named, then the output: all before any work
    options.resolve(kwargs.get("task") or cls.task, "train", given, cli=True)
    train = input_path(args.train, "TRAIN", stdin_ok=True)
    dev = None if args.dev is None else input_path(args.dev, "--dev")
    _refuse_dev_on_train(train, dev)
    if "init" in given:
        given["init"] = str(model_path(given["init"], "--init"))
    check_output(args.output, "-o")
    if args.plot:
        check_output(args.plot, "--plot")
    if "gazetteers" in given:
        paths = {}
        for item in given["gazetteers"]:
            typ, sep, path = item.partition("=")
            if not sep or not typ or not path:
                raise InputError(f"--gazetteer expects TYPE=FILE, not {item!r}")
            paths.setdefault(typ, []).append(Path(input_path(path, "--gazetteer")))
        given["gazetteers"] = paths                     # the task reads them, before any work
    if "clusters" in given:
        given["clusters"] = Path(input_path(given["clusters"], "--clusters"))
    if "dictionary" in given:
        given["dictionary"] = Path(input_path(given["dictionary"], "--dict"))    # a path, never words
    if args.plot:
        from ..plot import figure_format, need_matplotlib
        figure_format(args.plot)                        # refuse before training, not after
        need_matplotlib()
    if args.dask or args.scheduler:
        if args.dask and args.scheduler:
            raise InputError("--dask starts a local cluster, --scheduler uses an existing one: give one")
        if args.scheduler and "threads" in given:
            raise InputError("--threads applies to --dask (its workers), not to --scheduler")
        if train is sys.stdin.buffer:
            raise InputError("distributed training reads TRAIN on the workers: give a file, not '-'")
    try:
        with _dask_client(args, given) as client:
            if client is not None:
                kwargs["client"] = client
            model = cls.train(train, dev=dev, verbose=not args.quiet, **kwargs, **given)
    except TrainingInterrupted as exc:
        # Ctrl-C, or a Dask cluster that lost its workers (WorkersLost says why)
        why = f" because {exc.reason}" if isinstance(exc, WorkersLost) else ""
        if exc.model is None:
            say(f"fasttag: interrupted at epoch {exc.epoch}{why}, before any epoch was completed: "
                f"nothing saved")
            return 130
        exc.model.save(args.output)
        say(f"fasttag: interrupted at epoch {exc.epoch}{why}: saved {args.output} with "
            f"{exc.model.summary(interrupted=True)}")
        return 130
    model.save(args.output)
    if args.plot:
        from ..plot import learning_curves
        learning_curves(model, labels=[os.path.basename(args.output)], path=args.plot)
    if not args.quiet:
        say(f"saved {args.output}: {model.summary()}")
    return 0


def _refuse_dev_on_train(train, dev):
    """Before any work: --dev may not name the file TRAIN names (another
    spelling, a link) or that standard input reads for TRAIN '-'."""
    if dev is not None:
        from ..tasks.datafiles import refuse_dev_on_train
        refuse_dev_on_train(train, dev, what="--dev")


@contextlib.contextmanager
def _dask_client(args, given):
    """The Dask client of ``--dask`` (a LocalCluster of ``--threads`` worker
    processes, 2 by default) or ``--scheduler``; None without them."""
    if not (args.dask or args.scheduler):
        yield None
        return
    from ..distributed import require_dask
    dd = require_dask()
    if args.scheduler:
        try:
            client = dd.Client(args.scheduler, timeout=10)
        except (OSError, TimeoutError, ValueError) as exc:
            raise InputError(f"--scheduler {args.scheduler}: cannot connect ({exc})") from None
        with client:
            yield client
        return
    workers = given.pop("threads", 2) or available_cores()         # 0: every core
    with dd.LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None) \
            as cluster, dd.Client(cluster) as client:
        yield client



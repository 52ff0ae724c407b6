"""What ``hlo-indexing-opt`` does once its command line asks for work (anything but
``--help``, ``--version`` and ``--list-passes``, which :mod:`hlo_indexing.tools.opt`
answers without loading the MLIR bindings): run the passes on one input or a batch, or
draw a layout (``--show-layout``)."""

from __future__ import annotations

from hlo_indexing.errors import SourceLocation
from hlo_indexing.tools import batch, driver, output
from hlo_indexing.tools import show_layout as show_layout_tool
from hlo_indexing.tools.options import COMMAND_LINE, Options, UsageError, check_usage


def show_layout(options: Options) -> int:
    """``--show-layout SHAPE``: the layout viewer (``hlo-indexing-layout``) on the shape."""
    if options.get("format", "text") not in ("text", "svg"):
        raise UsageError(
            f"invalid value '{options.get('format')}' for --format: expected text or svg",
            SourceLocation(COMMAND_LINE, 1, options.columns["format"]),
        )
    args = [str(options.get("show-layout")), f"--format={options.get('format', 'text')}"]
    if options.get("o", "-") != "-":
        args += ["-o", str(options.get("o"))]
    return show_layout_tool.main(args)


def process(options: Options) -> int:
    """Run the passes on the inputs (one, or a batch) and write the output (``-o``)."""
    check_usage(options)
    if batch.is_batch(options):
        return batch.run_batch(options)
    failed, result = driver.process_input(options, options.inputs[0] if options.inputs else "-")
    destination = str(options.get("o", "-"))
    if failed and destination != "-":
        return 1  # like mlir-opt: stdout shows the chunks that succeeded, a file stays untouched
    output.write_output(destination, result)
    return 1 if failed else 0

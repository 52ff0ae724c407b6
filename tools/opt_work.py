"""What ``hlo-indexing-opt`` does once its command line asks for work (anything but
``--help``, ``--version`` and ``--list-passes``, which :mod:`hlo_indexing.tools.opt`
answers without loading the MLIR bindings): run the passes on one input or a batch, or
draw a layout (``--show-layout``)."""

from __future__ import annotations

from hlo_indexing.errors import SourceLocation
from hlo_indexing.tools import batch, driver, output, reports
from hlo_indexing.tools import show_layout as show_layout_tool
from hlo_indexing.tools.options import COMMAND_LINE, Options, UsageError, check_show_layout_usage, check_usage


def show_layout(options: Options) -> int:
    """``--show-layout SHAPE``: the layout viewer (``hlo-indexing-layout``) on the shape;
    a usage error for any other argument but ``--format`` and ``-o``."""
    check_show_layout_usage(options)
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
    """Run the passes on the inputs (one, or a batch) and write the output (``-o``) and
    the JSON reports (:mod:`~hlo_indexing.tools.reports`)."""
    check_usage(options)
    if batch.is_batch(options):
        return batch.run_batch(options)
    report_destination = reports.destination(options)
    made: list[reports.Report] | None = None if report_destination is None else []
    failed, result = driver.process_input(options, options.inputs[0] if options.inputs else "-", made)
    destination = str(options.get("o", "-"))
    # like mlir-opt: stdout shows the chunks that succeeded, a file stays untouched
    if not failed or destination == "-":
        output.write_output(destination, result)
    if report_destination is not None and made is not None and (not failed or report_destination == "-"):
        output.write_output(report_destination, reports.render(made, reports.as_lines(options, batch=False)))
    return 1 if failed else 0

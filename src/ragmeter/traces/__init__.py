"""Production traces (Langfuse, Phoenix / OpenInference, OpenTelemetry incl. OpenLLMetry,
LangSmith) as samples."""

from typing import TYPE_CHECKING

from ragmeter import _lazy

if TYPE_CHECKING:
    from ragmeter.traces._formats import canonical_format as canonical_format
    from ragmeter.traces._formats import guess_format as guess_format
    from ragmeter.traces._import import FORMATS as FORMATS
    from ragmeter.traces._import import import_traces as import_traces
    from ragmeter.traces._sniff import format_name as format_name
    from ragmeter.traces._sniff import nothing_read as nothing_read
    from ragmeter.traces._span import Document as Document
    from ragmeter.traces._span import Span as Span
    from ragmeter.traces._span import TraceFileError as TraceFileError
    from ragmeter.traces._span import TraceImport as TraceImport
    from ragmeter.traces._span import Unmapped as Unmapped

_lazy.attach(__name__, __file__)

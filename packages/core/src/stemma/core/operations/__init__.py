"""Operations over many artifacts: declarations, artifact types, drafts and results.

Subclass :class:`OperationDefinition` to declare a creator (``preprocess`` / ``execute`` /
``postprocess`` in a sandbox) or a curator (``execute_curator`` over DataFrames); return drafts
in an :class:`ArtifactResult`, or existing ids in a :class:`PassthroughResult`.
"""

from stemma.core.operations.batching import make_units, pack_workers
from stemma.core.operations.builtins import Criterion, Filter, IngestData, IngestFiles, Merge
from stemma.core.operations.definition import NoParams, OperationDefinition
from stemma.core.operations.drafts import (
    ArtifactDraft,
    ConfigDraft,
    CustomDraft,
    DataDraft,
    FileRefDraft,
    FinalizedArtifact,
    MetricDraft,
)
from stemma.core.operations.kinds import OperationKind
from stemma.core.operations.pairing import GroupBy, PairedGroup, pair_inputs
from stemma.core.operations.registry import get_operation, registered_operations
from stemma.core.operations.results import (
    ArtifactResult,
    ExecuteInput,
    OperationResult,
    PassthroughResult,
    PostprocessInput,
    PreprocessInput,
    validate_result,
)
from stemma.core.operations.specs import (
    COMMON_COLUMNS,
    ArtifactType,
    ColumnType,
    Execution,
    InputSpec,
    OutputSpec,
    Resources,
    artifact_types,
    get_artifact_type,
    register_artifact_type,
)
from stemma.core.operations.stem_matching import NamedArtifact, infer_lineage, match_lineage

__all__ = [
    # declaring operations
    "InputSpec",
    "NoParams",
    "OperationDefinition",
    "OperationKind",
    "OutputSpec",
    "get_operation",
    "registered_operations",
    # step settings
    "Execution",
    "Resources",
    # artifact types
    "COMMON_COLUMNS",
    "ArtifactType",
    "ColumnType",
    "artifact_types",
    "get_artifact_type",
    "register_artifact_type",
    # drafts and finalized artifacts
    "ArtifactDraft",
    "ConfigDraft",
    "CustomDraft",
    "DataDraft",
    "FileRefDraft",
    "FinalizedArtifact",
    "MetricDraft",
    # lifecycle inputs and results
    "ArtifactResult",
    "ExecuteInput",
    "OperationResult",
    "PassthroughResult",
    "PostprocessInput",
    "PreprocessInput",
    "validate_result",
    # pairing, batching and lineage (pure)
    "GroupBy",
    "NamedArtifact",
    "PairedGroup",
    "infer_lineage",
    "make_units",
    "match_lineage",
    "pack_workers",
    "pair_inputs",
    # built-in operations
    "Criterion",
    "Filter",
    "IngestData",
    "IngestFiles",
    "Merge",
]

"""Synthetic test sets from your own documents: load files, folders or your own chunks with
stable ids, split them into structure-aware chunks, build a knowledge graph, and write
single-hop, multi-hop and comparison questions in the documents' language, each checked
for answerability and near-duplicates."""

from ragmeter._text import split_sentences
from ragmeter.testset._chunking import Chunk, Tokenizer, chunk_documents
from ragmeter.testset._documents import (
    Document,
    DocumentLoadError,
    LoadedDocuments,
    SkippedFile,
    documents_from_chunks,
    load_documents,
)
from ragmeter.testset._generate import (
    DEFAULT_MIX,
    agenerate_testset,
    as_chunks,
    chunks_from_documents,
    generate_testset,
    parse_mix,
)
from ragmeter.testset._graph import (
    Edge,
    KnowledgeGraph,
    LinkSettings,
    Node,
    abuild_graph,
    entity_key,
)
from ragmeter.testset._result import (
    GeneratedSample,
    GeneratedTestset,
    SizeAccounting,
    SynthesizerAccount,
)
from ragmeter.testset._synthesizers import Candidate, candidates_for
from ragmeter.testset._writer import allocate

__all__ = [
    "DEFAULT_MIX",
    "Candidate",
    "Chunk",
    "Document",
    "DocumentLoadError",
    "Edge",
    "GeneratedSample",
    "GeneratedTestset",
    "KnowledgeGraph",
    "LinkSettings",
    "LoadedDocuments",
    "Node",
    "SizeAccounting",
    "SkippedFile",
    "SynthesizerAccount",
    "Tokenizer",
    "abuild_graph",
    "agenerate_testset",
    "allocate",
    "as_chunks",
    "candidates_for",
    "chunk_documents",
    "chunks_from_documents",
    "documents_from_chunks",
    "entity_key",
    "generate_testset",
    "load_documents",
    "parse_mix",
    "split_sentences",
]

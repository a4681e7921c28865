"""Documents and chunking for test-set generation: load files, folders or the user's own chunks
as documents with stable ids, and split them into structure-aware, token-sized chunks."""

from ragmeter.testset._chunking import Chunk, Tokenizer, chunk_documents, split_sentences
from ragmeter.testset._documents import (
    Document,
    DocumentLoadError,
    LoadedDocuments,
    SkippedFile,
    documents_from_chunks,
    load_documents,
)

__all__ = [
    "Chunk",
    "Document",
    "DocumentLoadError",
    "LoadedDocuments",
    "SkippedFile",
    "Tokenizer",
    "chunk_documents",
    "documents_from_chunks",
    "load_documents",
    "split_sentences",
]

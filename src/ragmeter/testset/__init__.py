"""Synthetic test sets from your own documents: load files, folders or your own chunks with
stable ids, split them into structure-aware chunks, build a knowledge graph, and write
single-hop, multi-hop and comparison questions in the documents' language, each checked
for answerability and near-duplicates."""

from typing import TYPE_CHECKING

from ragmeter import _lazy

if TYPE_CHECKING:
    from ragmeter._text import split_sentences as split_sentences
    from ragmeter.testset._chunking import Chunk as Chunk
    from ragmeter.testset._chunking import Tokenizer as Tokenizer
    from ragmeter.testset._chunking import chunk_documents as chunk_documents
    from ragmeter.testset._documents import Document as Document
    from ragmeter.testset._documents import DocumentLoadError as DocumentLoadError
    from ragmeter.testset._documents import LoadedDocuments as LoadedDocuments
    from ragmeter.testset._documents import SkippedFile as SkippedFile
    from ragmeter.testset._documents import documents_from_chunks as documents_from_chunks
    from ragmeter.testset._documents import load_documents as load_documents
    from ragmeter.testset._generate import DEFAULT_MIX as DEFAULT_MIX
    from ragmeter.testset._generate import agenerate_testset as agenerate_testset
    from ragmeter.testset._generate import as_chunks as as_chunks
    from ragmeter.testset._generate import chunks_from_documents as chunks_from_documents
    from ragmeter.testset._generate import generate_testset as generate_testset
    from ragmeter.testset._generate import parse_mix as parse_mix
    from ragmeter.testset._graph import Edge as Edge
    from ragmeter.testset._graph import KnowledgeGraph as KnowledgeGraph
    from ragmeter.testset._graph import LinkSettings as LinkSettings
    from ragmeter.testset._graph import Node as Node
    from ragmeter.testset._graph import abuild_graph as abuild_graph
    from ragmeter.testset._graph import entity_key as entity_key
    from ragmeter.testset._result import GeneratedSample as GeneratedSample
    from ragmeter.testset._result import GeneratedTestset as GeneratedTestset
    from ragmeter.testset._result import SizeAccounting as SizeAccounting
    from ragmeter.testset._result import SynthesizerAccount as SynthesizerAccount
    from ragmeter.testset._synthesizers import Candidate as Candidate
    from ragmeter.testset._synthesizers import candidates_for as candidates_for
    from ragmeter.testset._writer import allocate as allocate

_lazy.attach(__name__, __file__)

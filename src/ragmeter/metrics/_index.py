# ruff: noqa: E501
"""Every built-in and shipped metric, in the order ``ragmeter metrics`` lists them, read by
the name lookup without importing a metric module. Generated from the ``@builtin_metric``
declarations by ``python -m ragmeter.metrics._indexer --write``: do not edit.
"""

from ragmeter.metrics._spec import Declared

# fmt: off
INDEX: tuple[Declared, ...] = (
    Declared("faithfulness", "ragmeter.metrics.llm.faithfulness:Faithfulness", "llm", "share of the response's claims the contexts support"),
    Declared("answer_relevancy", "ragmeter.metrics.llm.answer_relevancy:AnswerRelevancy", "llm", "similarity of questions generated from the response to the question", aliases=("response_relevancy",)),
    Declared("answer_correctness", "ragmeter.metrics.llm.answer_correctness:AnswerCorrectness", "llm", "0.75 x claim F1 vs reference + 0.25 x embedding similarity"),
    Declared("context_precision", "ragmeter.metrics.llm.context_precision:ContextPrecision", "llm", "rank-weighted share of contexts useful for the reference (AP)", aliases=("llm_context_precision_with_reference", "contextual_precision", "ContextualPrecisionMetric")),
    Declared("context_utilization", "ragmeter.metrics.llm.context_utilization:ContextUtilization", "llm", "rank-weighted share of contexts the response used (AP)", aliases=("llm_context_precision_without_reference", "context_precision_without_reference")),
    Declared("context_recall", "ragmeter.metrics.llm.context_recall:ContextRecall", "llm", "share of reference statements the contexts support", aliases=("llm_context_recall", "contextual_recall", "ContextualRecallMetric")),
    Declared("context_relevance", "ragmeter.metrics.llm.context_relevance:ContextRelevance", "llm", "share of contexts relevant to the question (no reference, no response; RAGAS's NVIDIA-style ContextRelevance rates all contexts at once, 0-2)"),
    Declared("context_entity_recall", "ragmeter.metrics.llm.context_entity_recall:ContextEntityRecall", "llm", "share of reference entities present in the contexts", aliases=("context_entities_recall",)),
    Declared("noise_sensitivity_relevant", "ragmeter.metrics.llm.noise_sensitivity:NoiseSensitivity", "llm", "share of claims wrong and drawn from relevant contexts (lower is better)", aliases=("noise_sensitivity",)),
    Declared("noise_sensitivity_irrelevant", "ragmeter.metrics.llm.noise_sensitivity:NoiseSensitivity", "llm", "share of claims wrong and drawn from irrelevant contexts (lower is better)", params={"mode": "irrelevant"}),
    Declared("noise_sensitivity_all", "ragmeter.metrics.llm.noise_sensitivity:NoiseSensitivity", "llm", "share of claims wrong, wherever they came from (= relevant + irrelevant + hallucination; lower is better)", params={"mode": "all"}),
    Declared("hallucination", "ragmeter.metrics.llm.hallucination:Hallucination", "llm", "share of claims wrong and supported by no context (RAGChecker; lower is better)"),
    Declared("self_knowledge", "ragmeter.metrics.llm.self_knowledge:SelfKnowledge", "llm", "share of claims correct but supported by no context (RAGChecker; lower is better)"),
    Declared("claim_context_utilization", "ragmeter.metrics.llm.claim_context_utilization:ClaimContextUtilization", "llm", "share of the reference statements found in the contexts that the response states (RAGChecker's context utilization)"),
    Declared("abstention", "ragmeter.metrics.llm.abstention:Abstention", "llm", "1 when the response abstained where it should (unanswerable, or no context supports an answer) and answered where it could; details separate wrongly refused from hallucinated instead of refusing"),
    Declared("factual_correctness", "ragmeter.metrics.llm.factual_correctness:FactualCorrectness", "llm", "claim F1 of response vs reference"),
    Declared("semantic_similarity", "ragmeter.metrics.llm.semantic_similarity:SemanticSimilarity", "embedding", "cosine of response and reference embeddings", aliases=("answer_similarity",)),
    Declared("precision", "ragmeter.metrics.retrieval.precision:PrecisionAtK", "retrieval", "share of the top K that is relevant", cutoff="required"),
    Declared("recall", "ragmeter.metrics.retrieval.recall:RecallAtK", "retrieval", "share of the relevant found in the top K", cutoff="required"),
    Declared("f1", "ragmeter.metrics.retrieval.f1:F1AtK", "retrieval", "harmonic mean of precision@K, recall@K", cutoff="required"),
    Declared("hit", "ragmeter.metrics.retrieval.hit:HitAtK", "retrieval", "1 if anything relevant is in the top K", cutoff="required", aliases=("hit_rate", "success")),
    Declared("mrr", "ragmeter.metrics.retrieval.mrr:MRR", "retrieval", "1 / rank of the first relevant context", cutoff="optional", aliases=("reciprocal_rank",)),
    Declared("map", "ragmeter.metrics.retrieval.map:MAP", "retrieval", "average precision (trec_eval map / map_cut)", cutoff="optional", aliases=("ap", "average_precision")),
    Declared("ndcg", "ragmeter.metrics.retrieval.ndcg:NDCG", "retrieval", "NDCG, linear gain (trec_eval ndcg_cut)", cutoff="optional"),
    Declared("ndcg_exp", "ragmeter.metrics.retrieval.ndcg:NDCG", "retrieval", "NDCG, exponential gain 2^rel - 1", cutoff="optional", params={"gain": "exponential"}),
    Declared("r_precision", "ragmeter.metrics.retrieval.r_precision:RPrecision", "retrieval", "precision at R = number relevant", aliases=("rprec",)),
    Declared("id_context_precision", "ragmeter.metrics.context.id_context_precision:IDContextPrecision", "context", "rank-weighted precision of retrieved ids (AP; RAGAS's id_based_context_precision ignores rank: precision@K with K = the number retrieved gives that)", aliases=("id_based_context_precision",)),
    Declared("id_context_recall", "ragmeter.metrics.context.id_context_recall:IDContextRecall", "context", "share of reference ids retrieved", aliases=("id_based_context_recall",)),
    Declared("string_context_precision", "ragmeter.metrics.context.string_context_precision:StringContextPrecision", "context", "rank-weighted precision by string similarity", aliases=("non_llm_context_precision_with_reference",)),
    Declared("string_context_recall", "ragmeter.metrics.context.string_context_recall:StringContextRecall", "context", "share of reference contexts matched by string similarity", aliases=("non_llm_context_recall",)),
    Declared("exact_match", "ragmeter.metrics.text.exact_match:ExactMatch", "answer", "response equals reference", aliases=("em",)),
    Declared("string_presence", "ragmeter.metrics.text.string_presence:StringPresence", "answer", "reference appears in response", aliases=("string_present",)),
    Declared("rouge_l", "ragmeter.metrics.text.rouge:Rouge", "answer", "ROUGE-L F1 (longest common subsequence)", aliases=("rouge", "rougeL", "rouge_score")),
    Declared("rouge_1", "ragmeter.metrics.text.rouge:Rouge", "answer", "ROUGE-1 F1 (unigrams)", aliases=("rouge1",), params={"variant": "rouge_1"}),
    Declared("rouge_2", "ragmeter.metrics.text.rouge:Rouge", "answer", "ROUGE-2 F1 (bigrams)", aliases=("rouge2",), params={"variant": "rouge_2"}),
    Declared("bleu", "ragmeter.metrics.text.bleu:BLEU", "answer", "sentence BLEU (sacrebleu), 0-1 (RAGAS's bleu_score: corpus BLEU of the pair)", aliases=("bleu_score",)),
    Declared("chrf", "ragmeter.metrics.text.chrf:ChrF", "answer", "character n-gram F-score (sacrebleu), 0-1", aliases=("chrf_score",)),
    Declared("chrf++", "ragmeter.metrics.text.chrf:ChrF", "answer", "chrF with word bigrams", aliases=("chrfpp",), params={"word_order": 2}),
    Declared("sql_equivalence", "ragmeter.metrics.custom.sql_equivalence:SQLEquivalence", "custom", "1 if the generated SQL returns the reference SQL's rows on the SQLite database in metadata db_path (execution accuracy), else 0; no judge"),
    Declared("sql_execution", "ragmeter.metrics.custom.sql_equivalence:SQLExecution", "custom", "sql_equivalence's execution alone: n/a where the queries cannot be run"),
    Declared("sql_equivalence_judge", "ragmeter.metrics.custom.sql_judge:sql_equivalence_judge", "custom", "judged: would the generated and the reference SQL return the same rows?"),
    Declared("multihop_completeness", "ragmeter.metrics.custom.multihop_completeness:MultiHopCompleteness", "custom", "share of the question's hops (reference contexts) the response's claims use", aliases=("multi_hop_completeness",)),
    Declared("tone_zh", "ragmeter.metrics.custom.tone:tone_rubric_zh", "custom", "Chinese customer-service tone and attitude, a judged 1-5 rubric"),
)
# fmt: on

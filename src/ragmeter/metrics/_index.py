"""Every built-in and shipped metric, in the order ``ragmeter metrics`` lists them, read by
the name lookup without importing a metric module. Generated from the ``@builtin_metric``
declarations by ``python -m ragmeter.metrics._indexer --write``: do not edit.
"""

from ragmeter.metrics._spec import Declared

INDEX: tuple[Declared, ...] = (
    Declared(
        name="faithfulness",
        target="ragmeter.metrics.llm.faithfulness:Faithfulness",
        family="llm",
        summary="share of the response's claims the contexts support",
    ),
    Declared(
        name="answer_relevancy",
        target="ragmeter.metrics.llm.answer_relevancy:AnswerRelevancy",
        family="llm",
        summary="similarity of questions generated from the response to the question",
        aliases=("response_relevancy",),
    ),
    Declared(
        name="answer_correctness",
        target="ragmeter.metrics.llm.answer_correctness:AnswerCorrectness",
        family="llm",
        summary="0.75 x claim F1 vs reference + 0.25 x embedding similarity",
    ),
    Declared(
        name="context_precision",
        target="ragmeter.metrics.llm.context_precision:ContextPrecision",
        family="llm",
        summary="rank-weighted share of contexts useful for the reference (AP)",
        aliases=(
            "llm_context_precision_with_reference",
            "contextual_precision",
            "ContextualPrecisionMetric",
        ),
    ),
    Declared(
        name="context_utilization",
        target="ragmeter.metrics.llm.context_utilization:ContextUtilization",
        family="llm",
        summary="rank-weighted share of contexts the response used (AP)",
        aliases=("llm_context_precision_without_reference", "context_precision_without_reference"),
    ),
    Declared(
        name="context_recall",
        target="ragmeter.metrics.llm.context_recall:ContextRecall",
        family="llm",
        summary="share of reference statements the contexts support",
        aliases=("llm_context_recall", "contextual_recall", "ContextualRecallMetric"),
    ),
    Declared(
        name="context_relevance",
        target="ragmeter.metrics.llm.context_relevance:ContextRelevance",
        family="llm",
        summary=(
            "share of contexts relevant to the question (no reference, no response; RAGAS's "
            "NVIDIA-style ContextRelevance rates all contexts at once, 0-2)"
        ),
    ),
    Declared(
        name="context_entity_recall",
        target="ragmeter.metrics.llm.context_entity_recall:ContextEntityRecall",
        family="llm",
        summary="share of reference entities present in the contexts",
        aliases=("context_entities_recall",),
    ),
    Declared(
        name="noise_sensitivity_relevant",
        target="ragmeter.metrics.llm.noise_sensitivity:NoiseSensitivity",
        family="llm",
        summary="share of claims wrong and drawn from relevant contexts (lower is better)",
        aliases=("noise_sensitivity",),
    ),
    Declared(
        name="noise_sensitivity_irrelevant",
        target="ragmeter.metrics.llm.noise_sensitivity:NoiseSensitivity",
        family="llm",
        summary="share of claims wrong and drawn from irrelevant contexts (lower is better)",
        params={"mode": "irrelevant"},
    ),
    Declared(
        name="noise_sensitivity_all",
        target="ragmeter.metrics.llm.noise_sensitivity:NoiseSensitivity",
        family="llm",
        summary=(
            "share of claims wrong, wherever they came from (= relevant + irrelevant + "
            "hallucination; lower is better)"
        ),
        params={"mode": "all"},
    ),
    Declared(
        name="hallucination",
        target="ragmeter.metrics.llm.hallucination:Hallucination",
        family="llm",
        summary="share of claims wrong and supported by no context (RAGChecker; lower is better)",
    ),
    Declared(
        name="self_knowledge",
        target="ragmeter.metrics.llm.self_knowledge:SelfKnowledge",
        family="llm",
        summary="share of claims correct but supported by no context (RAGChecker; lower is better)",
    ),
    Declared(
        name="claim_context_utilization",
        target="ragmeter.metrics.llm.claim_context_utilization:ClaimContextUtilization",
        family="llm",
        summary=(
            "share of the reference statements found in the contexts that the response states "
            "(RAGChecker's context utilization)"
        ),
    ),
    Declared(
        name="abstention",
        target="ragmeter.metrics.llm.abstention:Abstention",
        family="llm",
        summary=(
            "1 when the response abstained where it should (unanswerable, or no context supports "
            "an answer) and answered where it could; details separate wrongly refused from "
            "hallucinated instead of refusing"
        ),
    ),
    Declared(
        name="factual_correctness",
        target="ragmeter.metrics.llm.factual_correctness:FactualCorrectness",
        family="llm",
        summary="claim F1 of response vs reference",
    ),
    Declared(
        name="semantic_similarity",
        target="ragmeter.metrics.llm.semantic_similarity:SemanticSimilarity",
        family="embedding",
        summary="cosine of response and reference embeddings",
        aliases=("answer_similarity",),
    ),
    Declared(
        name="precision",
        target="ragmeter.metrics.retrieval.precision:PrecisionAtK",
        family="retrieval",
        summary="share of the top K that is relevant",
        cutoff="required",
    ),
    Declared(
        name="recall",
        target="ragmeter.metrics.retrieval.recall:RecallAtK",
        family="retrieval",
        summary="share of the relevant found in the top K",
        cutoff="required",
    ),
    Declared(
        name="f1",
        target="ragmeter.metrics.retrieval.f1:F1AtK",
        family="retrieval",
        summary="harmonic mean of precision@K, recall@K",
        cutoff="required",
    ),
    Declared(
        name="hit",
        target="ragmeter.metrics.retrieval.hit:HitAtK",
        family="retrieval",
        summary="1 if anything relevant is in the top K",
        cutoff="required",
        aliases=("hit_rate", "success"),
    ),
    Declared(
        name="mrr",
        target="ragmeter.metrics.retrieval.mrr:MRR",
        family="retrieval",
        summary="1 / rank of the first relevant context",
        cutoff="optional",
        aliases=("reciprocal_rank",),
    ),
    Declared(
        name="map",
        target="ragmeter.metrics.retrieval.map:MAP",
        family="retrieval",
        summary="average precision (trec_eval map / map_cut)",
        cutoff="optional",
        aliases=("ap", "average_precision"),
    ),
    Declared(
        name="ndcg",
        target="ragmeter.metrics.retrieval.ndcg:NDCG",
        family="retrieval",
        summary="NDCG, linear gain (trec_eval ndcg_cut)",
        cutoff="optional",
    ),
    Declared(
        name="ndcg_exp",
        target="ragmeter.metrics.retrieval.ndcg:NDCG",
        family="retrieval",
        summary="NDCG, exponential gain 2^rel - 1",
        cutoff="optional",
        params={"gain": "exponential"},
    ),
    Declared(
        name="r_precision",
        target="ragmeter.metrics.retrieval.r_precision:RPrecision",
        family="retrieval",
        summary="precision at R = number relevant",
        aliases=("rprec",),
    ),
    Declared(
        name="id_context_precision",
        target="ragmeter.metrics.context.id_context_precision:IDContextPrecision",
        family="context",
        summary=(
            "rank-weighted precision of retrieved ids (AP; RAGAS's id_based_context_precision "
            "ignores rank: precision@K with K = the number retrieved gives that)"
        ),
        aliases=("id_based_context_precision",),
    ),
    Declared(
        name="id_context_recall",
        target="ragmeter.metrics.context.id_context_recall:IDContextRecall",
        family="context",
        summary="share of reference ids retrieved",
        aliases=("id_based_context_recall",),
    ),
    Declared(
        name="string_context_precision",
        target="ragmeter.metrics.context.string_context_precision:StringContextPrecision",
        family="context",
        summary="rank-weighted precision by string similarity",
        aliases=("non_llm_context_precision_with_reference",),
    ),
    Declared(
        name="string_context_recall",
        target="ragmeter.metrics.context.string_context_recall:StringContextRecall",
        family="context",
        summary="share of reference contexts matched by string similarity",
        aliases=("non_llm_context_recall",),
    ),
    Declared(
        name="exact_match",
        target="ragmeter.metrics.text.exact_match:ExactMatch",
        family="answer",
        summary="response equals reference",
        aliases=("em",),
    ),
    Declared(
        name="string_presence",
        target="ragmeter.metrics.text.string_presence:StringPresence",
        family="answer",
        summary="reference appears in response",
        aliases=("string_present",),
    ),
    Declared(
        name="rouge_l",
        target="ragmeter.metrics.text.rouge:Rouge",
        family="answer",
        summary="ROUGE-L F1 (longest common subsequence)",
        aliases=("rouge", "rougeL", "rouge_score"),
    ),
    Declared(
        name="rouge_1",
        target="ragmeter.metrics.text.rouge:Rouge",
        family="answer",
        summary="ROUGE-1 F1 (unigrams)",
        aliases=("rouge1",),
        params={"variant": "rouge_1"},
    ),
    Declared(
        name="rouge_2",
        target="ragmeter.metrics.text.rouge:Rouge",
        family="answer",
        summary="ROUGE-2 F1 (bigrams)",
        aliases=("rouge2",),
        params={"variant": "rouge_2"},
    ),
    Declared(
        name="bleu",
        target="ragmeter.metrics.text.bleu:BLEU",
        family="answer",
        summary="sentence BLEU (sacrebleu), 0-1 (RAGAS's bleu_score: corpus BLEU of the pair)",
        aliases=("bleu_score",),
    ),
    Declared(
        name="chrf",
        target="ragmeter.metrics.text.chrf:ChrF",
        family="answer",
        summary="character n-gram F-score (sacrebleu), 0-1",
        aliases=("chrf_score",),
    ),
    Declared(
        name="chrf++",
        target="ragmeter.metrics.text.chrf:ChrF",
        family="answer",
        summary="chrF with word bigrams",
        aliases=("chrfpp",),
        params={"word_order": 2},
    ),
    Declared(
        name="sql_equivalence",
        target="ragmeter.metrics.custom.sql_equivalence:SQLEquivalence",
        family="custom",
        summary=(
            "1 if the generated SQL returns the reference SQL's rows on the SQLite database in "
            "metadata db_path (execution accuracy), else 0; no judge"
        ),
    ),
    Declared(
        name="sql_execution",
        target="ragmeter.metrics.custom.sql_equivalence:SQLExecution",
        family="custom",
        summary="sql_equivalence's execution alone: n/a where the queries cannot be run",
    ),
    Declared(
        name="sql_equivalence_judge",
        target="ragmeter.metrics.custom.sql_judge:sql_equivalence_judge",
        family="custom",
        summary="judged: would the generated and the reference SQL return the same rows?",
    ),
    Declared(
        name="multihop_completeness",
        target="ragmeter.metrics.custom.multihop_completeness:MultiHopCompleteness",
        family="custom",
        summary="share of the question's hops (reference contexts) the response's claims use",
        aliases=("multi_hop_completeness",),
    ),
    Declared(
        name="tone_zh",
        target="ragmeter.metrics.custom.tone:tone_rubric_zh",
        family="custom",
        summary="Chinese customer-service tone and attitude, a judged 1-5 rubric",
    ),
)

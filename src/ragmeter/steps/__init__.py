"""Steps: the shared, batched judge work that metrics are built from. Only steps call the judge."""

from typing import TYPE_CHECKING

from ragmeter import _lazy

if TYPE_CHECKING:
    from ragmeter.steps._facts import AnswerRelevance as AnswerRelevance
    from ragmeter.steps._facts import ClaimSource as ClaimSource
    from ragmeter.steps._facts import ContextVerdict as ContextVerdict
    from ragmeter.steps._facts import CustomAnswer as CustomAnswer
    from ragmeter.steps._facts import Entity as Entity
    from ragmeter.steps._facts import Facts as Facts
    from ragmeter.steps._facts import Need as Need
    from ragmeter.steps._facts import PassageSource as PassageSource
    from ragmeter.steps._facts import Statement as Statement
    from ragmeter.steps._facts import Support as Support
    from ragmeter.steps._generation import LENGTHS as LENGTHS
    from ragmeter.steps._generation import QUESTION_OUTPUTS as QUESTION_OUTPUTS
    from ragmeter.steps._generation import STYLES as STYLES
    from ragmeter.steps._generation import Answerability as Answerability
    from ragmeter.steps._generation import ChunkAnalysis as ChunkAnalysis
    from ragmeter.steps._generation import GenerationSteps as GenerationSteps
    from ragmeter.steps._generation import Length as Length
    from ragmeter.steps._generation import Persona as Persona
    from ragmeter.steps._generation import QuestionKind as QuestionKind
    from ragmeter.steps._generation import Style as Style
    from ragmeter.steps._generation import WrittenQuestion as WrittenQuestion
    from ragmeter.steps._judgments import ANSWER_RELEVANCE as ANSWER_RELEVANCE
    from ragmeter.steps._judgments import CUSTOM as CUSTOM
    from ragmeter.steps._judgments import ENTITIES as ENTITIES
    from ragmeter.steps._judgments import QUESTIONS as QUESTIONS
    from ragmeter.steps._judgments import RESPONSE_CLAIMS as RESPONSE_CLAIMS
    from ragmeter.steps._judgments import STATEMENT_CONTEXTS as STATEMENT_CONTEXTS
    from ragmeter.steps._judgments import STATEMENTS as STATEMENTS
    from ragmeter.steps._judgments import SUPPORT_REFERENCE as SUPPORT_REFERENCE
    from ragmeter.steps._judgments import SUPPORT_RESPONSE as SUPPORT_RESPONSE
    from ragmeter.steps._judgments import USEFULNESS_QUESTION as USEFULNESS_QUESTION
    from ragmeter.steps._judgments import USEFULNESS_REFERENCE as USEFULNESS_REFERENCE
    from ragmeter.steps._judgments import USEFULNESS_RESPONSE as USEFULNESS_RESPONSE
    from ragmeter.steps._judgments import StepError as StepError
    from ragmeter.steps._judgments import context_columns as context_columns
    from ragmeter.steps._judgments import is_claim as is_claim
    from ragmeter.steps._judgments import stated_verbatim as stated_verbatim
    from ragmeter.steps._runner import StepRunner as StepRunner
    from ragmeter.steps._schemas import ChunkAnalysisOutput as ChunkAnalysisOutput
    from ragmeter.steps._schemas import PersonasOutput as PersonasOutput
    from ragmeter.steps._schemas import QuestionOutput as QuestionOutput
    from ragmeter.steps._table import JUDGMENTS as JUDGMENTS
    from ragmeter.steps._table import DataValue as DataValue
    from ragmeter.steps._table import Generate as Generate
    from ragmeter.steps._table import JudgmentKind as JudgmentKind
    from ragmeter.steps._table import Request as Request
    from ragmeter.steps._table import Stage as Stage
    from ragmeter.steps._table import Verdict as Verdict
    from ragmeter.steps._table import judgment as judgment
    from ragmeter.steps._table import register as register
    from ragmeter.steps._table import schema_for as schema_for
    from ragmeter.steps._table import unregister as unregister
    from ragmeter.steps._table import verifies as verifies

_lazy.attach(__name__, __file__)

package example;

import static org.junit.jupiter.api.Assertions.assertAll;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The golden dataset as a regression suite: one JUnit invocation per case, named after it.
 *
 * <p>A case passes when the judge says its answer is grounded in the documents (a judge check,
 * noisy) and the answer contains every expected fact (a code check, never wrong). Surefire
 * writes one testcase per case; gatecal reads those reports to calibrate the gate.
 */
class GoldenDatasetTest {

    private static final SupportAssistant ASSISTANT = SupportAssistant.fromSystemProperties();
    private static final Judge JUDGE = ScriptedJudge.fromSystemProperties();

    static Stream<GoldenCase> goldenCases() {
        return GoldenCase.load("/support-golden.txt").stream();
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("goldenCases")
    void answers(GoldenCase golden) {
        String answer = ASSISTANT.answer(golden.id(), golden.question(), golden.context());
        assertAll(
                () -> assertTrue(
                        JUDGE.isGrounded(golden.id(), golden.question(), golden.context(), answer),
                        "judge: not grounded in the documents: " + answer),
                () -> golden.expectedFacts().forEach(fact -> assertTrue(
                        answer.contains(fact), "missing fact '" + fact + "': " + answer)));
    }
}

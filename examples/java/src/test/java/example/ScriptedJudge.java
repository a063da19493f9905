package example;

import java.util.Arrays;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.concurrent.ConcurrentHashMap;
import java.util.stream.Collectors;

/**
 * A judge without a model: a word-overlap rule (the answer's words found in the question and
 * the documents) gives the right verdict, then the verdict is
 * flipped with probability {@code flip}, as a noisy model judge errs.
 *
 * <p>The noise is seeded: {@code -Djudge.seed=N} names the night (each night's run draws its own
 * noise, as a live judge would on another day), and every call for a case draws afresh, so a
 * rerun (Surefire's rerunFailingTestsCount) can pass where the first attempt failed.
 * {@code -Djudge.flip=0.05} is the share of verdicts flipped.
 */
final class ScriptedJudge implements Judge {

    private static final double OVERLAP = 0.6;

    private final String seed;
    private final double flip;
    private final Map<String, Integer> calls = new ConcurrentHashMap<>();

    ScriptedJudge(String seed, double flip) {
        this.seed = seed;
        this.flip = flip;
    }

    static ScriptedJudge fromSystemProperties() {
        return new ScriptedJudge(
                System.getProperty("judge.seed", "0"),
                Double.parseDouble(System.getProperty("judge.flip", "0.05")));
    }

    @Override
    public boolean isGrounded(String caseId, String question, String context, String answer) {
        boolean truth = overlap(answer, question + " " + context) >= OVERLAP;
        int call = calls.merge(caseId, 1, Integer::sum);
        long draw = (seed + ":" + caseId + ":" + call).hashCode();
        boolean flipped = new SplittableRandom(draw).nextDouble() < flip;
        return truth != flipped;
    }

    /** The share of the answer's content words (longer than three letters) found in the evidence. */
    static double overlap(String answer, String evidence) {
        Set<String> answerWords = words(answer);
        Set<String> evidenceWords = words(evidence);
        if (answerWords.isEmpty()) {
            return 0.0;
        }
        long found = answerWords.stream().filter(evidenceWords::contains).count();
        return (double) found / answerWords.size();
    }

    private static Set<String> words(String text) {
        return Arrays.stream(text.toLowerCase(Locale.ROOT).split("[^\\p{L}\\p{N}]+"))
                .filter(w -> w.length() > 3)
                .collect(Collectors.toSet());
    }
}

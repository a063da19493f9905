package example;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.Properties;

/**
 * The application under test: answers a support question from the documents retrieval found.
 *
 * <p>Scripted, so the example builds anywhere: the healthy build's answers, or, with
 * {@code -Dapp.build=regressed}, a bad prompt change that breaks three of them (a hallucinated
 * 60-day refund window, an off-topic reply, a wrong price). Replace {@link #answer} with your
 * real model call.
 */
public final class SupportAssistant {

    private final Properties answers = new Properties();

    public SupportAssistant(String build) {
        load("/answers-healthy.properties");
        if (build.equals("regressed")) {
            load("/answers-regressed.properties");
        } else if (!build.equals("healthy")) {
            throw new IllegalArgumentException("app.build must be healthy or regressed, not " + build);
        }
    }

    /** The build named by the system property app.build (default healthy). */
    public static SupportAssistant fromSystemProperties() {
        return new SupportAssistant(System.getProperty("app.build", "healthy"));
    }

    public String answer(String caseId, String question, String context) {
        String answer = answers.getProperty(caseId);
        if (answer == null) {
            throw new IllegalArgumentException("no scripted answer for " + caseId);
        }
        return answer;
    }

    private void load(String resource) {
        try (InputStream in = SupportAssistant.class.getResourceAsStream(resource)) {
            answers.load(in);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}

package example;

/**
 * An LLM judge asked one yes-or-no question: is this answer grounded in these documents?
 *
 * <p>With a real model, build the prompt from the three strings, ask the model at temperature 0
 * and read "yes" only from a reply that is exactly yes (a reply that merely starts with it, or
 * says "yes, but", is the one-word trap). {@link ScriptedJudge} stands in for the model here.
 */
interface Judge {

    boolean isGrounded(String caseId, String question, String context, String answer);
}

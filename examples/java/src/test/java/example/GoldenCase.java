package example;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/** One row of the golden dataset: a question, the documents retrieval supplies, the facts a good answer must contain. */
record GoldenCase(String id, String question, String context, List<String> expectedFacts) {

    /** The id is what JUnit shows for the invocation ({@code @ParameterizedTest(name = "{0}")}). */
    @Override
    public String toString() {
        return id;
    }

    /** The rows of a dataset resource: {@code id | question | context | fact; fact}, # comments. */
    static List<GoldenCase> load(String resource) {
        List<GoldenCase> cases = new ArrayList<>();
        try (BufferedReader in = new BufferedReader(new InputStreamReader(
                GoldenCase.class.getResourceAsStream(resource), StandardCharsets.UTF_8))) {
            for (String line; (line = in.readLine()) != null; ) {
                if (line.isBlank() || line.startsWith("#")) {
                    continue;
                }
                String[] f = line.split("\\|");
                if (f.length != 4) {
                    throw new IllegalArgumentException(resource + ": not 4 fields: " + line);
                }
                List<String> facts = Arrays.stream(f[3].split(";")).map(String::strip).toList();
                cases.add(new GoldenCase(f[0].strip(), f[1].strip(), f[2].strip(), facts));
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return cases;
    }
}

package io.github.dblock.testsupport;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

import com.jayway.jsonpath.JsonPath;

/**
 * The properties reference, {@code docs/properties.md}, checked against the configuration
 * metadata a module's build generates: one generated section per module, between the
 * lines {@code <!-- BEGIN GENERATED: module -->} and {@code <!-- END GENERATED: module -->},
 * with one table row per property (name, default, description). The rest of the page is
 * written by hand.
 * <p>
 * {@link #check(Path, Path, String)} fails when the page misses a property of the
 * metadata, documents one the metadata does not have, or shows a row otherwise than the
 * metadata says. It always writes the page as it should be to the module's
 * {@code target/docs/properties.md}; with the system property {@value #WRITE_PROPERTY}
 * set to {@code true} it writes it over {@code docs/properties.md} instead of failing.
 */
public final class PropertiesReference {

	/** The system property that makes {@link #check} write the page instead of failing. */
	public static final String WRITE_PROPERTY = "dblock.docs.write";

	/** The page, relative to the repository's root. */
	public static final String PAGE = "docs/properties.md";

	private static final String GENERATED_METADATA = "target/classes/META-INF/spring-configuration-metadata.json";

	private static final String ADDITIONAL_METADATA = "src/main/resources/META-INF/additional-spring-configuration-metadata.json";

	private static final String TABLE_HEAD = "| property | default | description |\n|---|---|---|\n";

	private static final Pattern ROW_NAME = Pattern.compile("^\\| `([^`]+)` \\|");

	private static final Pattern JAVADOC_TAG = Pattern.compile("\\{@(?:code|link|linkplain|literal) ([^}]*)}");

	private PropertiesReference() {
	}

	/**
	 * Checks a module's section of the page against the module's metadata: the one the
	 * configuration processor generated into {@code target/classes}, with the module's
	 * {@code additional-spring-configuration-metadata.json} merged over it.
	 * @param repositoryRoot the repository's root, holding {@value #PAGE}
	 * @param moduleDirectory the module's directory, after its compilation
	 * @param section the section's name in the page's markers (the module's name)
	 * @throws IOException if the page or the metadata cannot be read or written
	 * @throws AssertionError if the section differs from the metadata, saying how
	 */
	public static void check(Path repositoryRoot, Path moduleDirectory, String section) throws IOException {
		Path generated = moduleDirectory.resolve(GENERATED_METADATA);
		if (!Files.isRegularFile(generated)) {
			throw new AssertionError("No " + generated + ": compile " + moduleDirectory.getFileName() + " first");
		}
		Map<String, Property> properties = read(Files.readString(generated));
		Path additional = moduleDirectory.resolve(ADDITIONAL_METADATA);
		if (Files.isRegularFile(additional)) {
			read(Files.readString(additional)).forEach((name, property) -> properties.merge(name, property, Property::over));
		}
		Path pagePath = repositoryRoot.resolve(PAGE);
		String page = Files.readString(pagePath);
		String expected = replaceSection(page, section, render(properties.values()));
		Path copy = moduleDirectory.resolve("target/docs/properties.md");
		Files.createDirectories(copy.getParent());
		Files.writeString(copy, expected, StandardCharsets.UTF_8);
		if (page.equals(expected)) {
			return;
		}
		if (Boolean.getBoolean(WRITE_PROPERTY)) {
			Files.writeString(pagePath, expected, StandardCharsets.UTF_8);
			return;
		}
		List<String> problems = problems(section(page, section), section(expected, section));
		throw new AssertionError(PAGE + ", section " + section + ", differs from the configuration metadata:\n  "
				+ String.join("\n  ", problems) + "\nTo regenerate it, copy " + copy + " over " + pagePath
				+ ", or run this test with -D" + WRITE_PROPERTY + "=true (then review the diff).");
	}

	/**
	 * The differences between a section as documented and as the metadata renders it, one
	 * line each: properties missing from the page, properties documented that do not exist,
	 * rows that differ.
	 * @param documented the section's text in the page
	 * @param expected the section's text rendered from the metadata
	 * @return the differences; empty if the rows agree
	 */
	public static List<String> problems(String documented, String expected) {
		Map<String, String> documentedRows = rows(documented);
		Map<String, String> expectedRows = rows(expected);
		List<String> problems = new ArrayList<>();
		expectedRows.forEach((name, row) -> {
			if (!documentedRows.containsKey(name)) {
				problems.add("missing: " + name + " (expected " + row + ")");
			}
			else if (!documentedRows.get(name).equals(row)) {
				problems.add("differs: " + name + "\n    page:     " + documentedRows.get(name)
						+ "\n    metadata: " + row);
			}
		});
		documentedRows.keySet()
			.stream()
			.filter((name) -> !expectedRows.containsKey(name))
			.forEach((name) -> problems.add("documented but not a property: " + name));
		if (problems.isEmpty() && !documented.equals(expected)) {
			problems.add("the rows agree, the rest of the section (its table head, order or spacing) does not");
		}
		return problems;
	}

	/**
	 * The table of a section: its head and one row per property, in name order.
	 * @param properties the properties
	 * @return the table, ending with a line break
	 */
	public static String render(Collection<Property> properties) {
		StringBuilder table = new StringBuilder(TABLE_HEAD);
		new TreeMap<>(properties.stream().collect(Collectors.toMap(Property::name, (property) -> property, (a, b) -> b)))
			.values()
			.forEach((property) -> table.append(property.row()).append('\n'));
		return table.toString();
	}

	/**
	 * Reads the properties of a metadata document ({@code spring-configuration-metadata.json}
	 * or its additional counterpart).
	 * @param json the document
	 * @return the properties by name, in the document's order
	 */
	public static Map<String, Property> read(String json) {
		Map<String, Object> root = JsonPath.parse(json).json();
		Map<String, Property> properties = new LinkedHashMap<>();
		Object items = root.get("properties");
		if (items instanceof List<?> list) {
			for (Object item : list) {
				Map<?, ?> entry = (Map<?, ?>) item;
				String name = (String) entry.get("name");
				properties.put(name, new Property(name, entry.get("defaultValue"), (String) entry.get("description"),
						entry.containsKey("deprecation") || Boolean.TRUE.equals(entry.get("deprecated"))));
			}
		}
		return properties;
	}

	/**
	 * The text between a section's markers.
	 * @param page the page
	 * @param section the section's name
	 * @return the text, from the line after the opening marker to the closing marker
	 * @throws AssertionError if the page has no such section
	 */
	public static String section(String page, String section) {
		int[] bounds = bounds(page, section);
		return page.substring(bounds[0], bounds[1]);
	}

	/**
	 * The page with a section's text replaced.
	 * @param page the page
	 * @param section the section's name
	 * @param text the section's new text
	 * @return the new page
	 */
	public static String replaceSection(String page, String section, String text) {
		int[] bounds = bounds(page, section);
		return page.substring(0, bounds[0]) + text + page.substring(bounds[1]);
	}

	private static int[] bounds(String page, String section) {
		String begin = "<!-- BEGIN GENERATED: " + section + " -->\n";
		String end = "<!-- END GENERATED: " + section + " -->";
		int start = page.indexOf(begin);
		int stop = page.indexOf(end);
		if (start < 0 || stop < start) {
			throw new AssertionError(PAGE + " has no section between the lines " + begin.strip() + " and " + end);
		}
		return new int[] { start + begin.length(), stop };
	}

	private static Map<String, String> rows(String section) {
		Map<String, String> rows = new LinkedHashMap<>();
		for (String line : section.split("\n")) {
			Matcher name = ROW_NAME.matcher(line);
			if (name.find()) {
				rows.put(name.group(1), line);
			}
		}
		return rows;
	}

	/**
	 * One property of the metadata.
	 * @param name its name, e.g. {@code db-lock.default-wait}
	 * @param defaultValue its default as the metadata gives it (a string, number, boolean or
	 * list), or {@code null} if it gives none
	 * @param description its description, or {@code null}
	 * @param deprecated whether it is deprecated
	 */
	public record Property(String name, Object defaultValue, String description, boolean deprecated) {

		/**
		 * This property with the fields that another description of it gives replacing
		 * its own, as the configuration processor merges additional metadata.
		 * @param other the other description
		 * @return the merged property
		 */
		Property over(Property other) {
			return new Property(this.name, (other.defaultValue != null) ? other.defaultValue : this.defaultValue,
					(other.description != null) ? other.description : this.description,
					this.deprecated || other.deprecated);
		}

		/**
		 * Its table row: name, default and description, each escaped for a Markdown table.
		 * @return the row, without a line break
		 */
		public String row() {
			String text = Objects.requireNonNullElse(this.description, "").strip().replaceAll("\\s+", " ");
			text = JAVADOC_TAG.matcher(text).replaceAll((match) -> Matcher.quoteReplacement("`" + match.group(1) + "`"));
			if (this.deprecated) {
				text = "Deprecated. " + text;
			}
			return "| `" + this.name + "` | " + defaultText() + " | " + escape(text) + " |";
		}

		private String defaultText() {
			if (this.defaultValue == null) {
				return "—";
			}
			String value = (this.defaultValue instanceof List<?> list)
					? String.join(", ", list.stream().map((item) -> String.valueOf(item)).toList())
					: String.valueOf(this.defaultValue);
			return value.isEmpty() ? "(empty)" : "`" + value.replace("|", "\\|") + "`";
		}

		/** Escapes a cell's text: pipes everywhere, angle brackets outside code spans. */
		private static String escape(String text) {
			StringBuilder escaped = new StringBuilder();
			boolean code = false;
			for (char c : text.toCharArray()) {
				if (c == '`') {
					code = !code;
				}
				if (c == '|') {
					escaped.append("\\|");
				}
				else if (!code && c == '<') {
					escaped.append("&lt;");
				}
				else if (!code && c == '>') {
					escaped.append("&gt;");
				}
				else {
					escaped.append(c);
				}
			}
			return escaped.toString();
		}

	}

}

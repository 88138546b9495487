package io.github.dblock.autoconfigure;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

import io.github.dblock.testsupport.PropertiesReference;
import io.github.dblock.testsupport.PropertiesReference.Property;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code docs/properties.md} documents every property of this module's configuration
 * metadata, and no other, as the metadata describes it. After changing a property, run
 * this test with {@code -Ddblock.docs.write=true} to regenerate the page's section.
 */
class PropertiesReferenceTests {

	private static final String SECTION = "db-lock-autoconfigure";

	@Test
	void pageDocumentsTheMetadataOfThisModule() throws IOException {
		Path module = Path.of("").toAbsolutePath();
		PropertiesReference.check(module.getParent(), module, SECTION);
	}

	@Test
	void pageNamesThePropertiesUsersSetMost() throws IOException {
		Path module = Path.of("").toAbsolutePath();
		String section = PropertiesReference.section(Files.readString(module.getParent().resolve(PropertiesReference.PAGE)),
				SECTION);
		assertThat(section).contains("| `db-lock.default-wait` | `3s` |", "| `db-lock.default-lease` | `30s` |",
				"| `db-lock.statement-timeout` | — |", "| `management.health.db-lock.enabled` | `true` |",
				"| `management.endpoint.dblock.access` |");
	}

	@Test
	void checkFindsAPropertyMissingFromThePage() {
		String expected = PropertiesReference.render(List.of(property("db-lock.a", "a"), property("db-lock.b", "b")));
		String documented = PropertiesReference.render(List.of(property("db-lock.a", "a")));
		assertThat(PropertiesReference.problems(documented, expected)).singleElement()
			.asString()
			.startsWith("missing: db-lock.b");
	}

	@Test
	void checkFindsAPropertyThatDoesNotExist() {
		String expected = PropertiesReference.render(List.of(property("db-lock.a", "a")));
		String documented = PropertiesReference.render(List.of(property("db-lock.a", "a"), property("db-lock.gone", "x")));
		assertThat(PropertiesReference.problems(documented, expected))
			.containsExactly("documented but not a property: db-lock.gone");
	}

	@Test
	void checkFindsARowWhoseDefaultOrDescriptionDiffers() {
		String expected = PropertiesReference.render(List.of(new Property("db-lock.a", "3s", "Wait.", false)));
		String documented = PropertiesReference.render(List.of(new Property("db-lock.a", "5s", "Wait.", false)));
		assertThat(PropertiesReference.problems(documented, expected)).singleElement()
			.asString()
			.startsWith("differs: db-lock.a");
	}

	@Test
	void rowsAreEscapedForMarkdown() {
		Map<String, Property> read = PropertiesReference.read("""
				{"properties": [{"name": "db-lock.t", "defaultValue": "", "description":
				  "Table {@code <table-name>_history}, a <b>|</b> c\\n   d."}]}""");
		assertThat(read.get("db-lock.t").row())
			.isEqualTo("| `db-lock.t` | (empty) | Table `<table-name>_history`, a &lt;b&gt;\\|&lt;/b&gt; c d. |");
	}

	private static Property property(String name, String description) {
		return new Property(name, null, description, false);
	}

}

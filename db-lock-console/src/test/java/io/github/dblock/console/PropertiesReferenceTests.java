package io.github.dblock.console;

import java.io.IOException;
import java.nio.file.Path;

import io.github.dblock.testsupport.PropertiesReference;
import org.junit.jupiter.api.Test;

/**
 * The console's section of {@code docs/properties.md} documents every
 * {@code db-lock.console.*} property of this module's configuration metadata, and no
 * other. This module checks its own section: db-lock-autoconfigure, which checks the
 * rest, is built before the console and cannot read its metadata. After changing a
 * property, run this test with {@code -Ddblock.docs.write=true} to regenerate the section.
 */
class PropertiesReferenceTests {

	@Test
	void pageDocumentsTheMetadataOfThisModule() throws IOException {
		Path module = Path.of("").toAbsolutePath();
		PropertiesReference.check(module.getParent(), module, "db-lock-console");
	}

}

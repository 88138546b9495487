package io.github.dblock.nodes;

import io.github.dblock.testsupport.TestDatabase;

class MariaDbStaleReentryTests extends StaleReentryContractTests {

	@Override
	protected TestDatabase database() {
		return TestDatabase.MARIADB;
	}

}

package io.github.dblock.app;

import io.github.dblock.testsupport.TestDatabase;

class MariaDbSmallPoolTests extends SmallPoolContractTests {

	@Override
	protected TestDatabase database() {
		return TestDatabase.MARIADB;
	}

}

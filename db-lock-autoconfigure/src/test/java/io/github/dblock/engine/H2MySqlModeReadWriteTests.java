package io.github.dblock.engine;

import io.github.dblock.testsupport.TestDatabase;

class H2MySqlModeReadWriteTests extends ReadWriteContractTests {

	@Override
	protected TestDatabase database() {
		return TestDatabase.H2_MYSQL_MODE;
	}

}

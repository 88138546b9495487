package io.github.dblock.sample;

/**
 * The payment tests on the default configuration: an in-memory H2 database.
 */
class H2PaymentTests extends AbstractPaymentTests {

}

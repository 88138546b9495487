package io.github.dblock.sample;

/**
 * No order has the requested id.
 */
public class OrderNotFoundException extends RuntimeException {

	private static final long serialVersionUID = 1L;

	/**
	 * Creates an exception.
	 * @param orderId the id that was not found
	 */
	public OrderNotFoundException(long orderId) {
		super("Order " + orderId + " does not exist");
	}

}

# frozen_string_literal: true

module LeaseMachines
  # The integer limits of the API, defined once for the whole suite: owners,
  # tokens and nanosecond instants are unsigned 64-bit integers. Included into
  # LeaseMachines::TestHelper (test/test_helper.rb) and
  # LeaseMachines::StoreTestHelper (test/stores/store_helper.rb), so every test
  # names them unqualified.
  module TestLimits
    U64_MAX = (2**64) - 1
    # As the API's error messages spell the ranges of owners and of tokens.
    OWNER_RANGE = "0..18446744073709551615"
    TOKEN_RANGE = "1..18446744073709551615"
  end
end

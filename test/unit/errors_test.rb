# frozen_string_literal: true

require "test_helper"
require "lease_machines/stores/cli"

module LeaseMachines
  # One error tree: whatever the gem raises of its own is a LeaseMachines::Error.
  class ErrorsTest < Minitest::Test
    def test_every_error_class_of_the_gem_is_a_lease_machines_error
      # Loading the parts that declare errors (no database driver) and
      # walking the heap make no extension object: not under GC.stress, where
      # they take minutes.
      errors = without_gc_stress { error_classes }

      expected = %w[StoreError OutcomeUnknownError FencedError UnknownTokenError ExpiredTokenError ForgedTokenError
                    ReissuedTokenError UnfencedWriteError LeaseLost Occupied NotConfiguredError NotLeasedError
                    Stores::UnreadableStatusesError].map { |name| "LeaseMachines::#{name}" }
      assert_empty expected - errors.map(&:name), "every error class is loaded"
      # The one exception: a store's deadline interrupt, which never leaves
      # the gem (the call raises StoreError or OutcomeUnknownError with it as
      # cause) and is no StandardError, so that no rescue on its way swallows it.
      interrupts = [Stores::Deadline::Exceeded]
      assert_empty errors.reject { |klass| klass <= Error || interrupts.include?(klass) }.map(&:name)
      refute_operator Stores::Deadline::Exceeded, :<=, StandardError
      assert_equal StandardError, Error.superclass
    end

    def error_classes
      [Stores::Status, Fences::Table, Runtime].each { |part| refute_nil part }
      lib = File.expand_path("../../lib", __dir__)
      ObjectSpace.each_object(Class).select do |klass|
        klass < Exception && klass.name&.start_with?("LeaseMachines::") &&
          Object.const_source_location(klass.name)&.first&.start_with?(lib) # the gem's, not a test's
      end
    end

    def test_rescuing_the_base_catches_a_fence_refusal_and_a_store_failure
      [FencedError.new(resource: "r", token: 1, highest: 2), OutcomeUnknownError.new("lost")].each do |error|
        caught = begin
          raise error
        rescue Error => e
          e
        end
        assert_same error, caught
      end
    end
  end
end

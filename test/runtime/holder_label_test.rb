# frozen_string_literal: true

require_relative "runtime_helper"
require "socket"

module LeaseMachines
  # hold's label: given to the store with each grant (docs/RUNTIME.md,
  # "Holder labels"), by default the host, the pid and the hold's tags.
  class HolderLabelTest < Minitest::Test
    include RuntimeHelper

    def test_the_default_label_is_the_host_the_pid_and_the_tags
      expected = "#{Socket.gethostname} pid #{Process.pid}"
      hold { assert_equal expected, @store.status("nightly").label }
      hold(tags: { job: "NightlyReport", jid: "4f1c" }) do
        assert_equal "#{expected} job=NightlyReport jid=4f1c", @store.status("nightly").label
      end
      assert_nil @store.status("nightly").label, "released: cleared"
      assert_equal [expected, "#{expected} job=NightlyReport jid=4f1c"], events(:acquire, :label)
    end

    def test_a_given_label_goes_to_the_store_and_the_acquire_event
      in_hold(label: "reports-1 pid 77") do
        assert_equal "reports-1 pid 77", @store.status("nightly").label
        @clock.advance(TTL / 2.0)
      end
      assert_equal ["reports-1 pid 77"], events(:acquire, :label)
      refute events(:renew).first.key?(:label), "only a grant's event carries the label it sent"
    end

    def test_each_slot_under_limit_gets_the_label
      hold(limit: 2, label: "slot holder") do |held|
        assert_equal "slot holder", @store.status(held.resource).label
        hold(limit: 2, label: "second holder") do |second|
          assert_equal "second holder", @store.status(second.resource).label
        end
      end
    end

    def test_a_bad_label_is_refused_before_anything_is_acquired
      error = assert_raises(ArgumentError) { hold(label: "x" * 201) { flunk "ran" } }
      assert_match(/\Alabel must be at most 200 bytes, got 201 bytes/, error.message)
      error = assert_raises(ArgumentError) { hold(label: "two\nlines") { flunk "ran" } }
      assert_equal 'label must not contain control characters, got "two\nlines"', error.message
      assert_nil @store.status("nightly")
      assert_empty @events
    end

    # The default is never refused: nobody chose it.
    def test_a_default_past_the_limit_is_cut_at_a_character_and_controls_become_question_marks
      label = Runtime::Label.default({ job: "Ré\nport#{'é' * 150}" })
      assert_operator label.bytesize, :<=, Stores::HolderLabel::MAX_BYTES
      assert_predicate label, :valid_encoding?
      assert_includes label, "job=Ré?port"
      assert_equal label, Stores::HolderLabel.check(label)
    end

    # Tags in other encodings or with bytes that are not UTF-8 become valid UTF-8, never an error.
    def test_a_default_of_tags_not_in_valid_utf8_is_valid_utf8
      label = Runtime::Label.default({ latin: "r\xE9sum\xE9".dup.force_encoding(Encoding::ISO_8859_1), bytes: "a\xFFb".b,
                                       broken: "c\xFFd", sym: :ok, n: 7 })
      assert_predicate label, :valid_encoding?
      assert_equal Encoding::UTF_8, label.encoding
      assert label.end_with?(" latin=résumé bytes=a?b broken=c?d sym=ok n=7"), label
      assert_equal label, Stores::HolderLabel.check(label)
    end

    # An in-memory Authority keeps no label; its events still carry it.
    def test_an_in_memory_authority_takes_the_label_for_its_events_only
      outcome = Authority.new.hold(owner: 1, ttl: TTL, clock: @clock, label: "local") { :ran }
      assert_equal :ran, outcome.value
      assert_equal ["local"], events(:acquire, :label)
    end
  end
end

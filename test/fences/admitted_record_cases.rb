# frozen_string_literal: true

require_relative "fence_helper"
require "lease_machines/fences/active_record"

module LeaseMachines
  # Fenced rows of models that check more than the row's own token: bound to
  # the lease store in the model's database (`fenced_by ..., store: true`,
  # `strict: true`), checked in the same UPDATE (or INSERT) statement, and
  # signed (`signing_keys:`), checked before anything is sent. Each write
  # shows a Fences::Pass (the lease's resource and the lease). Real stores,
  # real databases, on both engines.
  #
  # An including class provides `base`, `token_column(table)`, `store` (a
  # store in the models' database) and an engine's data module.
  module AdmittedRecordCases
    include FenceTestHelper

    TABLE = "admitted_reports"
    KEY = "the signing key of the report store"
    MAX = (2**64) - 1

    def model(kind)
      @models ||= {}
      @models[kind] ||= begin
        options = { bound: { store: true }, strict: { store: true, strict: true }, signed: { signing_keys: [KEY] } }
        klass = Class.new(base) do
          self.table_name = TABLE
          include Fences::Record
          fenced_by :lease_token, **options.fetch(kind)
        end
        name = "#{engine.capitalize}#{kind.capitalize}Report"
        AdmittedRecordCases.const_set(name, klass) unless AdmittedRecordCases.const_defined?(name)
        AdmittedRecordCases.const_get(name)
      end
    end

    def create_table
      base.connection.drop_table(TABLE, if_exists: true)
      base.connection.create_table(TABLE) do |t|
        t.string :day, null: false, index: { unique: true }
        t.text :body
        token_column(t)
      end
    end

    def now_s = Process.clock_gettime(Process::CLOCK_REALTIME).floor

    def grant(name, owner: 7, ttl: 30, now: now_s, signing: false)
      granting = signing ? signing_store : store
      decision = granting.authority(name).acquire(owner: owner, ttl: ttl, now: now)
      assert_predicate decision, :granted?
      decision.lease
    end

    def signing_store
      @signing_store ||= store_class.new(store_target, signing_keys: [KEY]).tap(&:setup!)
    end

    def row(kind, day = unique_name("day"))
      model(kind).create!(day: day, body: "first")
    end

    def stored(record) = model(:bound).unscoped.where(id: record.id).pick(:body, :lease_token)

    def test_a_bound_model_admits_an_issued_token_in_every_form
      name = unique_name("reports")
      lease = grant(name)
      pass = Fences::Pass.new(name, lease)
      record = row(:bound)

      assert record.fenced_update!(pass, body: "by the holder")
      assert_equal ["by the holder", lease.token], stored(record)
      assert_equal 1, model(:bound).fenced_update_all(pass, { id: record.id }, body: "all by the holder")
      day = unique_name("day")
      assert model(:bound).fenced_upsert!(pass, { day: day, body: "inserted" }, unique_by: :day)
      assert model(:bound).fenced_upsert!(pass, { day: day, body: "overwritten" }, unique_by: :day)
      assert_equal ["overwritten", lease.token], model(:bound).where(day: day).pick(:body, :lease_token)
    end

    def test_a_token_the_store_never_issued_is_refused_and_writes_nothing
      name = unique_name("reports")
      issued = grant(name)
      record = row(:bound)
      record.fenced_update!(Fences::Pass.new(name, issued), body: "by the holder")
      bogus = Fences::Pass.new(name, MAX)

      error = assert_raises(UnknownTokenError) { record.fenced_update!(bogus, body: "bricked") }
      assert_equal [MAX, issued.token, issued.token], [error.token, error.highest, error.last_issued]
      assert_same record, error.record
      assert_equal ["by the holder", issued.token], stored(record.reload)
      assert_equal 0, model(:bound).fenced_update_all(bogus, { id: record.id }, body: "bricked")
      assert_equal ["by the holder", issued.token], stored(record)

      # The upsert's insert is refused too: no row with the bogus token.
      day = unique_name("day")
      assert_raises(UnknownTokenError) { model(:bound).fenced_upsert!(bogus, { day: day, body: "bricked" }, unique_by: :day) }
      assert_nil model(:bound).find_by(day: day)
      # Another resource's token is not this one's either.
      other = grant(unique_name("other"), now: now_s)
      assert_raises(UnknownTokenError) do
        row(:bound).fenced_update!(Fences::Pass.new(unique_name("never"), other), body: "misrouted")
      end
      # And the holder still writes.
      assert record.fenced_update!(Fences::Pass.new(name, issued), body: "still the holder")
    end

    def test_a_stale_issued_token_is_still_fenced
      name = unique_name("reports")
      seven = grant(name, now: now_s - 100, ttl: 10)
      twelve = grant(name, owner: 12)
      record = row(:bound)
      record.fenced_update!(Fences::Pass.new(name, twelve), body: "by 12")

      error = assert_raises(FencedError) { record.fenced_update!(Fences::Pass.new(name, seven), body: "stale") }
      assert_instance_of FencedError, error
      assert_equal ["by 12", twelve.token], stored(record.reload)
    end

    def test_a_strict_model_refuses_the_token_of_an_expired_lease
      name = unique_name("reports")
      expired = grant(name, now: now_s - 100, ttl: 10)
      record = row(:strict)

      error = assert_raises(ExpiredTokenError) do
        record.fenced_update!(Fences::Pass.new(name, expired), body: "after expiry")
      end
      assert_equal expired.token, error.lease_token
      assert_equal ["first", nil], stored(record.reload)
      assert_equal 0, model(:strict).fenced_update_all(Fences::Pass.new(name, expired), { id: record.id }, body: "x")

      live = grant(name, owner: 8)
      assert record.fenced_update!(Fences::Pass.new(name, live), body: "by the live holder")
      assert_equal ["by the live holder", live.token], stored(record)
    end

    def test_a_bound_or_signed_model_needs_a_pass
      record = row(:bound)
      %i[bound signed].each do |kind|
        error = assert_raises(ArgumentError) { model(kind).find(record.id).fenced_update!(1, body: "bare") }
        assert_includes error.message, "Fences::Pass.new(resource, lease)"
        assert_raises(ArgumentError) { model(kind).fenced_update_all(1, {}, body: "bare") }
      end
      assert_equal ["first", nil], stored(record)
    end

    def test_a_signed_model_needs_the_proof
      name = unique_name("reports")
      lease = grant(name, signing: true)
      record = row(:signed)

      assert record.fenced_update!(Fences::Pass.new(name, lease), body: "signed")
      assert_equal ["signed", lease.token], stored(record)
      {
        missing: Fences::Pass.new(name, lease.token),
        forged: Fences::Pass.new(name, MAX, proof: lease.proof, owner: lease.owner),
        malformed: Fences::Pass.new(name, lease.token, proof: "nope", owner: lease.owner)
      }.each do |problem, pass|
        error = assert_raises(ForgedTokenError) { record.fenced_update!(pass, body: "refused") }
        assert_equal problem, error.problem
        assert_raises(ForgedTokenError) { model(:signed).fenced_update_all(pass, { id: record.id }, body: "refused") }
        assert_raises(ForgedTokenError) do
          model(:signed).fenced_upsert!(pass, { day: unique_name("day"), body: "refused" }, unique_by: :day)
        end
      end
      assert_raises(ForgedTokenError) do
        record.fenced_update!(Fences::Pass.new(unique_name("another"), lease), body: "another resource's proof")
      end
      another_owner = Fences::Pass.new(name, lease.token, proof: lease.proof, owner: lease.owner + 1)
      error = assert_raises(ForgedTokenError) { record.fenced_update!(another_owner, body: "another owner's") }
      assert_equal :forged, error.problem, "the proof signs the owner"
      assert_equal ["signed", lease.token], stored(record.reload)
      assert_equal 1, model(:signed).count
    end

    def test_a_pass_is_a_checked_value
      ill_typed!
      lease = grant(unique_name("reports"), signing: true)
      pass = Fences::Pass.new("reports/x", lease)

      assert_equal [lease.token, lease.proof, "reports/x"], [pass.token, pass.proof, pass.resource]
      assert_predicate pass, :frozen?
      assert_equal pass, Fences::Pass.new("reports/x", lease.token, proof: lease.proof, owner: lease.owner)
      assert_equal pass.hash, Fences::Pass.new("reports/x", lease.token, proof: lease.proof, owner: lease.owner).hash
      refute_equal pass, Fences::Pass.new("reports/x", lease.token, proof: lease.proof, owner: lease.owner + 1)
      refute_equal pass, Fences::Pass.new("reports/y", lease)
      assert_raises(ArgumentError) { Fences::Pass.new("", lease) }
      assert_raises(TypeError) { Fences::Pass.new("reports/x", "1") }
      assert_raises(ArgumentError) { Fences::Pass.new("reports/x", lease, proof: lease.proof) }
      assert_raises(ArgumentError) { Fences::Pass.new("reports/x", lease, owner: lease.owner) }
    end
  end
end

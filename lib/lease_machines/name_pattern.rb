# frozen_string_literal: true

module LeaseMachines
  # A glob over resource names, as operators type them (`status --match`, the web UI's filter).
  class NamePattern
    FLAGS = File::FNM_EXTGLOB | File::FNM_DOTMATCH
    GLOB_CHARACTERS = /[*?\[{]/
    private_constant :FLAGS, :GLOB_CHARACTERS

    attr_reader :glob

    def initialize(glob)
      raise TypeError, "glob must be a String, got #{glob.class}" unless glob.is_a?(String)
      unless glob.encoding == Encoding::UTF_8 && glob.valid_encoding?
        raise ArgumentError, "glob must be valid UTF-8, got #{glob.b.inspect}"
      end

      @glob = glob.dup.freeze
      freeze
    end

    def self.glob?(text) = text.match?(GLOB_CHARACTERS)

    def match?(name) = File.fnmatch?(@glob, name, FLAGS)
  end
end

# frozen_string_literal: true

module LeaseMachines
  # Reads the Prometheus text format 0.0.4 back, line by line, strictly:
  # every line is a HELP, a TYPE or a sample; a sample's metric has its TYPE
  # (and HELP) before it; label values are unescaped (\\, \", \n). Raises
  # on anything else, so a test that parses the exposition checks its form.
  class PrometheusText
    Sample = Struct.new(:name, :labels, :value)

    NAME = /[a-zA-Z_:][a-zA-Z0-9_:]*/
    LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\\n]|\\[\\"n])*)"/
    SUFFIXES = { histogram: %w[_bucket _sum _count], counter: [""] }.freeze

    attr_reader :help, :types, :samples

    # A sample value or an `le`, as Go's ParseFloat reads it.
    def self.number(text)
      { "+Inf" => Float::INFINITY, "-Inf" => -Float::INFINITY, "NaN" => Float::NAN }.fetch(text) { Float(text) }
    end

    def initialize(text)
      raise ArgumentError, "the exposition must end with a line feed" unless text.end_with?("\n")

      @help = {}
      @types = {}
      @samples = []
      text.each_line(chomp: true).with_index(1) { |line, number| read(line, number) }
    end

    # @return [Array<Sample>] the samples of `name`, whose labels include `labels`
    def find(name, **labels)
      wanted = labels.to_h { |key, value| [key.to_s, value.to_s] }
      @samples.select { |sample| sample.name == name && wanted <= sample.labels }
    end

    # @return [Float, nil] the one sample's value
    def value(name, **labels)
      found = find(name, **labels)
      raise ArgumentError, "#{found.size} samples of #{name} #{labels}" if found.size > 1

      found.first&.value
    end

    private

    def read(line, number)
      case line
      when /\A# HELP (#{NAME}) (.*)\z/o then @help[Regexp.last_match(1)] = unescape(Regexp.last_match(2))
      when /\A# TYPE (#{NAME}) (counter|gauge|histogram|summary|untyped)\z/o
        @types[Regexp.last_match(1)] = Regexp.last_match(2).to_sym
      when /\A(#{NAME})(?:\{(.*)\})? (\S+)\z/o
        sample(Regexp.last_match(1), Regexp.last_match(2), Regexp.last_match(3), number)
      else raise ArgumentError, "line #{number} is not in the text format: #{line.inspect}"
      end
    end

    def sample(name, labels, value, number)
      family = family_of(name) or raise ArgumentError, "line #{number}: #{name} has no TYPE before it"
      raise ArgumentError, "line #{number}: #{family} has no HELP" unless @help.key?(family)

      @samples << Sample.new(name, labels(labels.to_s, number), self.class.number(value))
    end

    def family_of(name)
      @types.find do |family, type|
        (SUFFIXES[type] || [""]).any? { |suffix| name == "#{family}#{suffix}" }
      end&.first
    end

    def labels(text, number)
      pairs = text.scan(LABEL)
      rebuilt = pairs.map { |key, value| "#{key}=\"#{value}\"" }.join(",")
      raise ArgumentError, "line #{number}: labels not in the text format: {#{text}}" unless rebuilt == text

      pairs.to_h.transform_values { |value| unescape(value) }
    end

    def unescape(text)
      text.gsub(/\\([\\"n])/) { Regexp.last_match(1) == "n" ? "\n" : Regexp.last_match(1) }
    end
  end
end

package io.verbus.sbe;

/**
 * The shape of one message type as far as bounds checking needs it: the root block length this build knows, then, in
 * wire order, the repeating groups (each with the entry block length this build knows) and the variable-length data
 * fields (each with its length-prefix size). Built once from the generated codecs' constants, so it follows the XML.
 */
final class MessageLayout
{
    static final int GROUP = 1;
    static final int VAR_DATA = 2;

    final int schemaId;
    final int templateId;
    final String name;
    final int blockLength;
    final int[] partKinds;
    final int[] partLengths;

    private MessageLayout(
        final int schemaId,
        final int templateId,
        final String name,
        final int blockLength,
        final int[] partKinds,
        final int[] partLengths)
    {
        this.schemaId = schemaId;
        this.templateId = templateId;
        this.name = name;
        this.blockLength = blockLength;
        this.partKinds = partKinds;
        this.partLengths = partLengths;
    }

    static MessageLayout fixed(final int schemaId, final int templateId, final String name, final int blockLength)
    {
        return new MessageLayout(schemaId, templateId, name, blockLength, new int[0], new int[0]);
    }

    static MessageLayout withGroup(
        final int schemaId, final int templateId, final String name, final int blockLength, final int entryBlockLength)
    {
        return new MessageLayout(
            schemaId, templateId, name, blockLength, new int[]{ GROUP }, new int[]{ entryBlockLength });
    }

    static MessageLayout withVarData(
        final int schemaId, final int templateId, final String name, final int blockLength, final int lengthHeaderSize)
    {
        return new MessageLayout(
            schemaId, templateId, name, blockLength, new int[]{ VAR_DATA }, new int[]{ lengthHeaderSize });
    }

    static int key(final int schemaId, final int templateId)
    {
        return (schemaId << 16) | templateId;
    }
}


)okokokok	*(
short